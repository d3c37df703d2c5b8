// Verifies webhook deliveries with the official Standard Webhooks verifier,
// as an integrator would. Reads a JSON array of { secret, headers, body }
// on stdin and prints a JSON array of true (verified) or the error message.
const { Webhook } = require("standardwebhooks");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(({ secret, headers, body }) => {
    try {
      new Webhook(secret).verify(body, headers);
      return true;
    } catch (e) {
      return String(e && e.message ? e.message : e);
    }
  });
  process.stdout.write(JSON.stringify(out));
});
