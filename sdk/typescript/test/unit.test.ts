// The client's own guarantees, against a fake fetch: retries with one
// Idempotency-Key, answers read by Content-Type, PlatformError, webhook
// verification and stream resumption. `npm test` runs it (e2e/sdk_test.go
// too); the e2e program in e2e/testdata/sdkapp drives the real platform.
import assert from "node:assert/strict";

import { Webhook } from "standardwebhooks";

import { createClient, PlatformError, streamEvents, verifyWebhook, WebhookVerificationError, type FetchLike } from "../src/index.js";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

async function retries(): Promise<void> {
  const keys: string[] = [];
  const bodies: string[] = [];
  const answers: (() => Response)[] = [
    () => json(503, { error: "unavailable", message: "try again" }, { "Retry-After": "0" }),
    () => {
      throw new TypeError("fetch failed");
    },
    () => json(429, { error: "rate_limited", message: "slow down" }, { "Retry-After": "0" }),
    () => json(200, { transactionId: "tx1" }),
  ];
  const fake: FetchLike = async (req) => {
    keys.push(req.headers.get("Idempotency-Key") ?? "");
    bodies.push(await req.text());
    assert.equal(req.headers.get("Authorization"), "Bearer t0ken");
    return answers.shift()!();
  };
  const client = createClient({ baseUrl: "http://platform.invalid/", token: "t0ken", maxRetries: 3, retryDelayMs: 1, fetch: fake });
  const tx = await client.POST("/api/fiat/transfer", { body: { fromWalletId: "w1", toEmail: "b@example.com", amountKzt: 5 } });
  assert.equal(tx.transactionId, "tx1");
  assert.equal(keys.length, 4);
  assert.match(keys[0]!, /^[0-9a-f-]{36}$/, "no Idempotency-Key on a write");
  assert.equal(new Set(keys).size, 1, "retries changed the Idempotency-Key");
  assert.equal(new Set(bodies).size, 1, "retries changed the body");

  // At most maxRetries retries, then the 503 is the error.
  let calls = 0;
  const down = createClient({
    baseUrl: "http://platform.invalid",
    maxRetries: 2,
    retryDelayMs: 1,
    fetch: async () => {
      calls++;
      return json(503, { error: "unavailable", message: "down" }, { "X-Request-Id": "req-1" });
    },
  });
  await assert.rejects(down.POST("/api/fiat/wallets", { body: { currency: "KZT" } }), (err) => {
    assert.ok(err instanceof PlatformError);
    assert.equal(err.status, 503);
    assert.equal(err.code, "unavailable");
    assert.equal(err.requestId, "req-1");
    return true;
  });
  assert.equal(calls, 3);

  // A read carries no key; the caller's own key is kept.
  const seen: (string | null)[] = [];
  const echo = createClient({
    baseUrl: "http://platform.invalid",
    fetch: async (req) => {
      seen.push(req.headers.get("Idempotency-Key"));
      return json(200, { items: [], nextCursor: null });
    },
  });
  await echo.GET("/api/fiat/wallets");
  await echo.POST("/api/fiat/wallets", { body: { currency: "KZT" }, headers: { "Idempotency-Key": "mine" } });
  assert.deepEqual(seen, [null, "mine"]);
  console.log("ok retries");
}

// A fake clock for the retries: sleeping advances it, and the waits are
// recorded.
function fakeClock(seed = 1) {
  let now = 1_000_000;
  let x = seed;
  const waits: number[] = [];
  return {
    waits,
    elapsed: () => now - 1_000_000,
    clock: {
      now: () => now,
      sleep: async (ms: number) => {
        waits.push(ms);
        now += ms;
      },
      random: () => {
        x = (x * 48271) % 2147483647;
        return x / 2147483647;
      },
    },
  };
}

// A lost machine: the platform answers 503 (Retry-After: 1), or nothing,
// for about 25 s while Patroni promotes the standby. A client with the
// default options rides it out — it retries with the same key until the
// write succeeds, never sooner than Retry-After, with jitter — and gives
// up only past its budget (30 s), with the last answer as the error.
async function ridesOutAHostLoss(): Promise<void> {
  const { clock, waits, elapsed } = fakeClock();
  const keys = new Set<string>();
  let refused = 0;
  const platform: FetchLike = async (req) => {
    keys.add(req.headers.get("Idempotency-Key") ?? "");
    if (elapsed() < 25_000) {
      if (elapsed() > 10_000 && elapsed() < 12_000) {
        refused++;
        throw new TypeError("fetch failed"); // the proxy itself restarting
      }
      return json(503, { error: "unavailable", message: "retry with the same Idempotency-Key" }, { "Retry-After": "1" });
    }
    return json(200, { transactionId: "tx1" });
  };
  const api = createClient({ baseUrl: "http://platform.invalid", token: "t", fetch: platform, retryClock: clock });
  const tx = await api.POST("/api/fiat/transfer", { body: { fromWalletId: "w1", toEmail: "b@example.com", amountKzt: 5 } });
  assert.equal(tx.transactionId, "tx1", "the write did not outlast a 25 s host loss");
  assert.equal(keys.size, 1, "the retries changed the Idempotency-Key");
  assert.ok(refused > 0, "no network error was retried");
  assert.ok(elapsed() >= 25_000 && elapsed() < 27_000, `succeeded after ${elapsed()} ms, want soon after 25 s`);
  const afterRetryAfter = waits.filter((w) => w >= 1000);
  assert.ok(afterRetryAfter.length >= waits.length - 3, `waits ${waits} do not honour Retry-After: 1`);
  assert.ok(Math.max(...waits) <= 4_000, `a wait of ${Math.max(...waits)} ms hides the recovery`);
  assert.ok(new Set(afterRetryAfter.map((w) => Math.round(w))).size > afterRetryAfter.length / 2, `waits ${waits} have no jitter`);

  // A platform that stays down: the client gives up once the next retry
  // would start past 30 s, and throws the last 503.
  const down = fakeClock(7);
  let calls = 0;
  const never = createClient({
    baseUrl: "http://platform.invalid",
    retryClock: down.clock,
    fetch: async () => {
      calls++;
      return json(503, { error: "unavailable", message: "down" }, { "Retry-After": "1" });
    },
  });
  await assert.rejects(never.POST("/api/fiat/wallets", { body: { currency: "KZT" } }), (err) => {
    assert.ok(err instanceof PlatformError && err.status === 503, `${err}`);
    assert.equal(err.retryAfterMs, 1000);
    return true;
  });
  assert.ok(down.elapsed() > 25_000 && down.elapsed() <= 30_000, `gave up after ${down.elapsed()} ms, want within the 30 s budget`);
  assert.ok(calls > 15, `only ${calls} attempts in the budget`);

  // A Retry-After past the budget is not waited for: the 429 is thrown.
  const slow = fakeClock();
  const limited = createClient({
    baseUrl: "http://platform.invalid",
    retryClock: slow.clock,
    fetch: async () => json(429, { error: "rate_limited", message: "slow down" }, { "Retry-After": "45" }),
  });
  await assert.rejects(limited.GET("/api/fiat/wallets"), (err) => err instanceof PlatformError && err.status === 429);
  assert.equal(slow.elapsed(), 0);
  console.log("ok rides out a host loss");
}

async function bodies(): Promise<void> {
  const answers: Record<string, Response> = {};
  const client = createClient({
    baseUrl: "http://platform.invalid",
    maxRetries: 0,
    fetch: async (req) => answers[new URL(req.url).pathname]!,
  });
  answers["/api/fiat/checkout/s1"] = new Response("<!doctype html><html></html>", { headers: { "Content-Type": "text/html; charset=utf-8" } });
  assert.equal(await client.GET("/api/fiat/checkout/{sessionId}", { params: { path: { sessionId: "s1" } } }), "<!doctype html><html></html>");
  answers["/api/fiat/transactions.csv"] = new Response("id,amount\n", { headers: { "Content-Type": "text/csv" } });
  assert.equal(await client.GET("/api/fiat/transactions.csv"), "id,amount\n");
  // A PDF (or anything not text) is bytes.
  answers["/api/fiat/wallets"] = new Response(new Uint8Array([37, 80, 68, 70]), { headers: { "Content-Type": "application/pdf" } });
  const pdf: unknown = await client.GET("/api/fiat/wallets");
  assert.ok(pdf instanceof Uint8Array && pdf.length === 4);
  // JSON that is not JSON is text, not a parse error.
  answers["/api/auth/me"] = new Response("<html>proxy</html>", { headers: { "Content-Type": "application/json" } });
  assert.equal(await client.GET("/api/auth/me"), "<html>proxy</html>");
  // An HTML error page is a PlatformError with the status as code.
  answers["/api/gov/proposals"] = new Response("<html>Bad gateway</html>", { status: 502, headers: { "Content-Type": "text/html" } });
  await assert.rejects(client.GET("/api/gov/proposals"), (err) => err instanceof PlatformError && err.code === "http_502" && err.status === 502);
  // A validation failure keeps its fields.
  answers["/api/fiat/transfer"] = json(422, { error: "validation_failed", message: "invalid", fields: { toEmail: "must be an e-mail" } });
  await assert.rejects(client.POST("/api/fiat/transfer", { body: { fromWalletId: "w", toEmail: "x", amountKzt: 1 } }), (err) => {
    const e = PlatformError.of(err, "POST", "/api/fiat/transfer");
    assert.ok(e);
    assert.equal(e.code, "validation_failed");
    assert.deepEqual(e.fields, { toEmail: "must be an e-mail" });
    return true;
  });
  // The event stream is not read as a body.
  answers["/api/fiat/admin/events"] = new Response("retry: 10\n\n", { headers: { "Content-Type": "text/event-stream" } });
  await assert.rejects(client.GET("/api/fiat/admin/events"), /streamEvents/);
  console.log("ok bodies");
}

function webhooks(): void {
  const body = JSON.stringify({ id: "evt1", type: "transfer.completed", module: "fiat", sentAt: "2026-01-01T00:00:00.000Z", data: { txId: "t1" } });
  const sign = (key: Uint8Array) => {
    const id = "evt1";
    const now = new Date();
    return {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(key, { format: "raw" }).sign(id, now, body),
    };
  };
  // A secret someone chose signs with its own bytes (the platform's endpoint secrets).
  const chosen = "my-endpoint-secret-0123456789";
  const h1 = sign(new TextEncoder().encode(chosen));
  assert.equal(verifyWebhook<{ txId: string }>(chosen, body, h1).data.txId, "t1");
  assert.equal(verifyWebhook(chosen, new TextEncoder().encode(body), new Headers(h1)).id, "evt1");
  // A whsec_ secret is the key it encodes…
  const key = new Uint8Array(24).map((_, i) => i * 7);
  const whsec = `whsec_${Buffer.from(key).toString("base64")}`;
  assert.equal(verifyWebhook(whsec, body, sign(key)).type, "transfer.completed");
  // …or, chosen as a string that merely looks like one, its own bytes.
  assert.equal(verifyWebhook(whsec, body, sign(new TextEncoder().encode(whsec))).type, "transfer.completed");
  assert.throws(() => verifyWebhook(chosen, body.replace("t1", "t2"), h1), WebhookVerificationError);
  assert.throws(() => verifyWebhook("another-secret-0123456789", body, h1), WebhookVerificationError);
  assert.throws(() => verifyWebhook(chosen, body, {}), WebhookVerificationError);
  assert.throws(() => verifyWebhook(`${whsec}x`, body, sign(key)), WebhookVerificationError);
  console.log("ok webhooks");
}

async function stream(): Promise<void> {
  const msg = (id: string) => `id: ${id}\nevent: transfer.completed\ndata: {"id":"${id}","type":"transfer.completed","module":"fiat","sentAt":"x","data":{}}\n\n`;
  const lastIds: (string | null)[] = [];
  let connection = 0;
  const fake: FetchLike = async (req) => {
    lastIds.push(req.headers.get("Last-Event-ID"));
    assert.equal(req.headers.get("Authorization"), "Bearer adm1n");
    connection++;
    const enc = new TextEncoder();
    if (connection === 1) {
      // a, b, then the connection drops mid-message
      let step = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          step++;
          if (step === 1) ctrl.enqueue(enc.encode(`retry: 5\n: connected\n\n${msg("a")}${msg("b")}id: c\nevent: tr`));
          else ctrl.error(new Error("reset"));
        },
      });
      return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
    }
    if (connection === 2) {
      return json(503, { error: "unavailable", message: "restarting" });
    }
    // The server resumes after b; it repeats b here, which the SDK drops.
    return new Response(`${msg("b")}${msg("c")}${msg("d")}`, { headers: { "Content-Type": "text/event-stream" } });
  };
  const client = createClient({ baseUrl: "http://platform.invalid", token: "adm1n", fetch: fake });
  const got: string[] = [];
  for await (const m of streamEvents(client, "/api/fiat/admin/events", { lastEventId: "start" })) {
    got.push(m.id);
    assert.equal(m.event?.id, m.id);
    if (got.length === 4) {
      break;
    }
  }
  assert.deepEqual(got, ["a", "b", "c", "d"]);
  assert.deepEqual(lastIds, ["start", "b", "b"]);

  const denied = createClient({ baseUrl: "http://platform.invalid", fetch: async () => json(403, { error: "forbidden", message: "admins only" }) });
  await assert.rejects(
    (async () => {
      for await (const _ of streamEvents(denied, "/api/fiat/admin/events")) {
        // unreachable
      }
    })(),
    (err) => err instanceof PlatformError && err.code === "forbidden",
  );
  console.log("ok stream");
}

await retries();
await ridesOutAHostLoss();
await bodies();
webhooks();
await stream();
console.log("ok unit");
