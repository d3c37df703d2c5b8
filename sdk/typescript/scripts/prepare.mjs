// The `prepare` script: builds dist/ (JavaScript and declarations) from src/.
//
// `npm install <path to this directory>` links the directory into the
// project and runs this script there, but installs none of this package's
// own dependencies: on a fresh checkout it first installs them (exactly
// package-lock.json, without scripts), so the build's TypeScript is there
// and the linked package finds its runtime dependencies.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

if (!existsSync(tsc)) {
  execFileSync(npm, ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
}
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
