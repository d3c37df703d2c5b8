// The SDK against the real platform: register → deposit (the processor's
// signed webhook) → transfer → history, plus the client's own guarantees
// (Idempotency-Key on money writes, 503 retried with the same key).
//
// Run by e2e/sdk_test.go after `tsc --strict`, with PLATFORM_URL (the
// platform's origin) and PROCESSOR_WEBHOOK_SECRET in the environment.
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";

import { createPlatformClient, isMoneyWrite, type PlatformClient } from "../src/index.js";

type Body = Record<string, unknown>;

/** The JSON body of an answer (data or error), checked to be an object. */
function body(r: { data?: unknown; error?: unknown; response: Response }, status: number, what: string): Body {
  const b: unknown = r.data ?? r.error;
  assert.equal(r.response.status, status, `${what}: status ${r.response.status}, body ${JSON.stringify(b)}`);
  assert.ok(typeof b === "object" && b !== null && !Array.isArray(b), `${what}: body is not an object: ${JSON.stringify(b)}`);
  return b as Body;
}

function str(b: Body, key: string): string {
  const v = b[key];
  assert.equal(typeof v, "string", `${key} is not a string in ${JSON.stringify(b)}`);
  return v as string;
}

function int(b: Body, key: string): number {
  const v = b[key];
  assert.ok(Number.isInteger(v), `${key} is not an integer in ${JSON.stringify(b)}`);
  return v as number;
}

function items(b: Body): Body[] {
  const v = b["items"];
  assert.ok(Array.isArray(v), `items is not an array in ${JSON.stringify(b)}`);
  return v as Body[];
}

function env(name: string): string {
  const v = process.env[name];
  assert.ok(v, `${name} must be set`);
  return v;
}

/** Signs a payload the way Stripe does: t=<unix>,v1=hex(HMAC-SHA256(secret, "<t>.<payload>")). */
function stripeSignature(secret: string, payload: string): string {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac("sha256", secret).update(`${t}.${payload}`).digest("hex");
  return `t=${t},v1=${v1}`;
}

async function register(baseUrl: string, name: string): Promise<{ client: PlatformClient; email: string }> {
  const client = createPlatformClient({ baseUrl });
  const email = `${name}-${randomUUID().slice(0, 8)}@example.com`;
  const r = await client.POST("/api/auth/register", { body: { email, password: "correct-horse-1", name } });
  const b = body(r, 201, "register");
  client.setToken(str(b, "token"));
  return { client, email };
}

async function balance(client: PlatformClient, walletId: string): Promise<number> {
  const b = body(await client.GET("/api/fiat/wallets"), 200, "wallets");
  const w = items(b).find((it) => it["id"] === walletId);
  assert.ok(w, `wallet ${walletId} not listed: ${JSON.stringify(b)}`);
  return int(w, "balance");
}

async function flow(): Promise<void> {
  const baseUrl = env("PLATFORM_URL");
  const secret = env("PROCESSOR_WEBHOOK_SECRET");

  const alice = await register(baseUrl, "alice");
  const bob = await register(baseUrl, "bob");

  const wallet = body(await alice.client.POST("/api/fiat/wallets", { body: { currency: "KZT" } }), 201, "create wallet");
  const walletId = str(wallet, "id");

  // Deposit: the SDK keys the money write itself (the platform echoes the
  // key it used; one it made itself would start with "auto-").
  const amount = 100_000;
  const dep = await alice.client.POST("/api/fiat/deposit", { body: { walletId, amount } });
  const depositId = str(body(dep, 201, "deposit"), "depositId");
  const echoed = dep.response.headers.get("Idempotency-Key") ?? "";
  assert.match(echoed, /^[0-9a-f-]{36}$/, `deposit was sent without the SDK's Idempotency-Key: ${echoed}`);

  // The processor confirms the payment with a signed payment_intent.succeeded.
  const payload = JSON.stringify({
    id: `evt_${randomUUID()}`, object: "event", type: "payment_intent.succeeded", api_version: "2024-06-20",
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `pi_${depositId}`, object: "payment_intent", amount, currency: "kzt", status: "succeeded",
      metadata: { depositId } } },
  });
  const hook = await alice.client.POST("/api/fiat/deposit/webhook", {
    body: JSON.parse(payload),
    bodySerializer: () => payload,
    params: { header: { "Stripe-Signature": stripeSignature(secret, payload) } },
  });
  body(hook, 200, "deposit webhook");
  assert.equal(await balance(alice.client, walletId), amount, "deposit not credited");

  // Transfer, then the same transfer again with the same key: one transfer.
  const key = `sdk-test-${randomUUID()}`;
  const send = () => alice.client.POST("/api/fiat/transfer", {
    body: { fromWalletId: walletId, toEmail: bob.email, amountKzt: 25_000, memo: "sdk test" },
    headers: { "Idempotency-Key": key },
  });
  const first = await send();
  const tx = body(first, first.response.status, "transfer");
  assert.ok(first.response.ok, `transfer: ${first.response.status} ${JSON.stringify(tx)}`);
  const transactionId = str(tx, "transactionId");
  assert.equal(int(tx, "feeKzt"), 25);
  assert.equal(int(tx, "fromBalanceKzt"), amount - 25_000 - 25);
  const again = await send();
  assert.equal(again.response.headers.get("Idempotent-Replayed"), "true", "replay not marked");
  assert.equal(str(body(again, first.response.status, "transfer replay"), "transactionId"), transactionId);
  assert.equal(await balance(alice.client, walletId), amount - 25_000 - 25, "the replay moved money");

  // History of both sides lists the transfer.
  for (const [who, c] of [["alice", alice.client], ["bob", bob.client]] as const) {
    const h = body(await c.GET("/api/fiat/transactions"), 200, `${who} history`);
    const ids = items(h).map((it) => it["id"]);
    assert.ok(ids.includes(transactionId), `${who}'s history lacks ${transactionId}: ${JSON.stringify(h)}`);
  }
}

/** A 503 is retried with the same request, so with the same Idempotency-Key. */
async function retries503(): Promise<void> {
  const seen: string[] = [];
  const bodies: string[] = [];
  let calls = 0;
  const client = createPlatformClient({
    baseUrl: "http://platform.invalid",
    token: "t0ken",
    retryDelayMs: 1,
    fetch: async (req) => {
      calls++;
      seen.push(req.headers.get("Idempotency-Key") ?? "");
      bodies.push(await req.text());
      assert.equal(req.headers.get("Authorization"), "Bearer t0ken");
      if (calls < 3) {
        return new Response(JSON.stringify({ error: "unavailable", message: "try again" }), {
          status: 503, headers: { "Content-Type": "application/json", "Retry-After": "0" },
        });
      }
      return new Response(JSON.stringify({ transactionId: "tx1" }), { status: 200, headers: { "Content-Type": "application/json" } });
    },
  });
  const r = await client.POST("/api/fiat/transfer", { body: { fromWalletId: "w1", toEmail: "b@example.com", amountKzt: 5 } });
  assert.equal(r.response.status, 200);
  assert.equal(calls, 3);
  assert.ok(seen[0], "no Idempotency-Key on a money write");
  assert.deepEqual(seen, [seen[0], seen[0], seen[0]], "retries changed the Idempotency-Key");
  assert.equal(new Set(bodies).size, 1, "retries changed the body");

  // A write that is not money-moving and has no key is not retried (it
  // could apply twice); it gets no key either.
  assert.equal(isMoneyWrite("POST", "/api/fiat/wallets"), false);
  assert.equal(isMoneyWrite("POST", "/api/fiat/transfer"), true);
  calls = 0;
  seen.length = 0;
  const fail = createPlatformClient({
    baseUrl: "http://platform.invalid",
    fetch: async (req) => {
      calls++;
      seen.push(req.headers.get("Idempotency-Key") ?? "");
      return new Response("{}", { status: 503, headers: { "Content-Type": "application/json" } });
    },
  });
  const unkeyed = await fail.POST("/api/fiat/wallets", { body: { currency: "KZT" } });
  assert.equal(unkeyed.response.status, 503);
  assert.equal(calls, 1, "an unkeyed write was retried");
  assert.deepEqual(seen, [""]);
  calls = 0;
  const read = await fail.GET("/api/fiat/wallets");
  assert.equal(read.response.status, 503);
  assert.equal(calls, 4, "a read is retried 3 times on 503");
}

await retries503();
console.log("ok retries503");
await flow();
console.log("ok flow");
