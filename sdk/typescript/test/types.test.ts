// Compile-time checks of the generated request types: `npm test` compiles
// this file with tsc --strict (e2e TestSDK runs it), and a check that no
// longer holds fails the compilation. Nothing here runs.
import { createClient, type RequestInitOf } from "../src/index.js";

export async function typeChecks(): Promise<void> {
  const client = createClient({ baseUrl: "http://platform.invalid/", token: "t0ken" });

  // Fields the server defaults (quorum, threshold, votingDurationSeconds)
  // are optional in a request: a minimal proposal compiles.
  await client.POST("/api/gov/proposals", {
    body: { title: "Fund the library", category: "budget", voteMode: "yes-no-abstain" },
  });

  // A transfer names its amount once, under either name...
  await client.POST("/api/fiat/transfer", { body: { fromWalletId: "w1", toEmail: "b@example.com", amountKzt: 100 } });
  await client.POST("/api/fiat/transfer", { body: { fromWalletId: "w1", toEmail: "b@example.com", amount: 100 } });
  // ...and one without an amount does not compile.
  // @ts-expect-error amount or amountKzt is required
  const noAmount: RequestInitOf<"post", "/api/fiat/transfer"> = { body: { fromWalletId: "w1", toEmail: "b@example.com" } };
  void noAmount;
}
