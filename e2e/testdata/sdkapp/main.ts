// A program written the way a user of @fintech-platform/sdk writes one: it
// imports the package root only, compiles with `tsc --strict` and runs on
// Node 20 against a fresh platform (e2e/sdk_test.go packs the SDK, installs
// the tarball next to this file and passes PLATFORM_URL, FIAT_ADMIN_TOKEN
// and VERIFIED_TOKEN). Each step prints "ok <step>"; any failure exits 1.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

import {
  createClient,
  paginate,
  PlatformError,
  streamEvents,
  verifyWebhook,
  WebhookVerificationError,
  type Client,
  type ErrorCode,
  type FetchLike,
  type PlatformEvent,
} from "@fintech-platform/sdk";

const baseUrl = env("PLATFORM_URL");

function env(name: string): string {
  const v = process.env[name];
  assert.ok(v, `${name} must be set`);
  return v;
}

function ok(step: string): void {
  console.log(`ok ${step}`);
}

/** Registers a user and returns a client that carries its token. */
async function register(name: string): Promise<{ client: Client; email: string; id: string }> {
  const client = createClient({ baseUrl });
  const email = `${name}-${randomUUID().slice(0, 8)}@example.com`;
  const session = await client.POST("/api/auth/register", { body: { email, password: "correct-horse-1", name } });
  client.setToken(session.token);
  return { client, email, id: session.user.id };
}

/** Tops up a wallet the way a person does in development: the embedded test processor's Pay button. */
async function deposit(client: Client, walletId: string, amount: number): Promise<void> {
  const dep = await client.POST("/api/fiat/deposit", { body: { walletId, amount } });
  assert.ok(dep.sessionId, `deposit without a checkout session: ${JSON.stringify(dep)}`);
  const page = await client.POST("/api/fiat/checkout/{sessionId}/pay", { params: { path: { sessionId: dep.sessionId } } });
  // An HTML answer is text, never a JSON parse error.
  assert.equal(typeof page, "string");
  assert.match(page, /<html/i);
}

async function balance(client: Client, walletId: string): Promise<number> {
  const wallets = await client.GET("/api/fiat/wallets");
  const w = wallets.items.find((it) => it.id === walletId);
  assert.ok(w, `wallet ${walletId} not listed`);
  return w.balance;
}

async function newWallet(client: Client): Promise<string> {
  return (await client.POST("/api/fiat/wallets", { body: { currency: "KZT" } })).id;
}

/** Runs fn over items with at most n at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        await fn(item);
      }
    }),
  );
}

// The code of an operation's PlatformError is the union the document
// declares, not string: this line does not compile otherwise.
type TransferCode = ErrorCode<"post", "/api/fiat/transfer">;
const transferCodeIsAUnion: string extends TransferCode ? false : true = true;
assert.ok(transferCodeIsAUnion);

async function transfers(): Promise<void> {
  const alice = await register("alice");
  const bob = await register("bob");
  const walletId = await newWallet(alice.client);
  await deposit(alice.client, walletId, 1_000_000);
  assert.equal(await balance(alice.client, walletId), 1_000_000, "deposit not credited");
  ok("deposit");

  // A transfer, sent twice with the same key: one transfer.
  const key = `sdk-${randomUUID()}`;
  const send = () =>
    alice.client.POST("/api/fiat/transfer", {
      body: { fromWalletId: walletId, toEmail: bob.email, amountKzt: 25_000, memo: "sdk" },
      headers: { "Idempotency-Key": key },
    });
  const tx = await send();
  assert.equal(tx.feeKzt, 25);
  assert.equal(tx.fromBalanceKzt, 1_000_000 - 25_000 - 25);
  const again = await send();
  assert.equal(again.transactionId, tx.transactionId, "the replay made another transfer");
  assert.equal(await balance(alice.client, walletId), 1_000_000 - 25_000 - 25, "the replay moved money");
  ok("transfer");

  // More than the balance: a PlatformError with the server's code.
  try {
    await alice.client.POST("/api/fiat/transfer", { body: { fromWalletId: walletId, toEmail: bob.email, amountKzt: 10_000_000 } });
    assert.fail("a transfer beyond the balance succeeded");
  } catch (err) {
    const e = PlatformError.of(err, "POST", "/api/fiat/transfer");
    assert.ok(e, `not a PlatformError of the transfer: ${String(err)}`);
    const code: TransferCode = e.code;
    assert.equal(code, "insufficient_balance");
    assert.equal(e.status, 400);
    assert.ok(e.message.length > 0);
    assert.ok(e.requestId, "no request id");
  }
  // A validation failure names its fields; a 401 and a 404 are errors too, not crashes.
  await assert.rejects(alice.client.POST("/api/fiat/transfer", { body: { fromWalletId: walletId, toEmail: "not-an-email", amountKzt: 1 } }), (err) => {
    assert.ok(err instanceof PlatformError);
    assert.equal(err.status, 422);
    assert.equal(err.code, "validation_failed");
    assert.ok(Object.keys(err.fields).length > 0, "validation_failed without fields");
    return true;
  });
  await assert.rejects(createClient({ baseUrl }).GET("/api/fiat/wallets"), (err) => err instanceof PlatformError && err.status === 401 && err.code === "auth_required");
  await assert.rejects(
    alice.client.GET("/api/fiat/wallets/{id}/public", { params: { path: { id: "0000000000000000000000000000" } } }),
    (err) => err instanceof PlatformError && err.status >= 400 && err.status < 500 && err.code !== "",
  );
  ok("errors");

  // A CSV answer is text.
  const csv = await alice.client.GET("/api/fiat/transactions.csv");
  assert.equal(typeof csv, "string");
  assert.ok(csv.includes(tx.transactionId), "the CSV lacks the transfer");
  ok("csv");
}

async function pages(): Promise<void> {
  const carol = await register("carol");
  const dave = await register("dave");
  const walletId = await newWallet(carol.client);
  await deposit(carol.client, walletId, 1_000_000);
  const n = 250;
  const sent = new Set<string>();
  await pool(
    Array.from({ length: n }, (_, i) => i),
    8,
    async (i) => {
      const tx = await carol.client.POST("/api/fiat/transfer", { body: { fromWalletId: walletId, toEmail: dave.email, amountKzt: 1_000 + i } });
      sent.add(tx.transactionId);
    },
  );
  assert.equal(sent.size, n);
  const seen = new Set<string>();
  let pagesRead = 0;
  const counting: FetchLike = (req) => {
    if (new URL(req.url).pathname === "/api/fiat/transactions") {
      pagesRead++;
    }
    return fetch(req);
  };
  const reader = createClient({ baseUrl, token: () => daveToken, fetch: counting });
  const daveToken = await tokenOf(dave.email);
  for await (const row of paginate(reader, "/api/fiat/transactions", { params: { query: { limit: 100 } } })) {
    assert.ok(!seen.has(row.id), `row ${row.id} listed twice`);
    seen.add(row.id);
    assert.equal(row.direction, "in");
  }
  assert.deepEqual([...seen].sort(), [...sent].sort(), "the pages do not list exactly the 250 transfers");
  assert.equal(pagesRead, 3, "250 rows at 100 a page are 3 pages");
  ok("paginate 250");
}

async function tokenOf(email: string): Promise<string> {
  const session = await createClient({ baseUrl }).POST("/api/auth/login", { body: { email, password: "correct-horse-1" } });
  return session.token;
}

/** A local HTTP endpoint that keeps every delivery: raw body and headers. */
async function receiver(): Promise<{ url: string; next: (match: (body: string) => boolean) => Promise<{ body: string; headers: IncomingHttpHeaders }>; close: () => void }> {
  const got: { body: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    async next(match) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const hit = got.find((g) => match(g.body));
        if (hit) {
          return hit;
        }
        assert.ok(Date.now() < deadline, "no webhook delivery within 15 s");
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => server.close(),
  };
}

async function webhooks(): Promise<void> {
  const erin = await register("erin");
  const frank = await register("frank");
  const walletId = await newWallet(erin.client);
  await deposit(erin.client, walletId, 100_000);
  const hooks = await receiver();
  try {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    await erin.client.POST("/api/fiat/me/webhook", {
      body: { url: hooks.url, secret, events: ["transfer.completed"], password: "correct-horse-1" },
    });
    const tx = await erin.client.POST("/api/fiat/transfer", { body: { fromWalletId: walletId, toEmail: frank.email, amountKzt: 1_234 } });
    const hit = await hooks.next((body) => body.includes(tx.transactionId));
    const event: PlatformEvent<{ txId: string; amountKzt: number }> = verifyWebhook(secret, hit.body, hit.headers);
    assert.equal(event.type, "transfer.completed");
    assert.equal(event.data.txId, tx.transactionId);
    assert.equal(event.data.amountKzt, 1_234);
    assert.throws(() => verifyWebhook(secret, hit.body.replace("1234", "9999"), hit.headers), WebhookVerificationError);
    assert.throws(() => verifyWebhook(`${secret}x`, hit.body, hit.headers), WebhookVerificationError);
    ok("webhook verified");
  } finally {
    hooks.close();
  }
}

async function events(): Promise<void> {
  const adminToken = env("FIAT_ADMIN_TOKEN");
  const gina = await register("gina");
  const hank = await register("hank");
  const walletId = await newWallet(gina.client);
  await deposit(gina.client, walletId, 100_000);
  const transfer = async (amountKzt: number) =>
    (await gina.client.POST("/api/fiat/transfer", { body: { fromWalletId: walletId, toEmail: hank.email, amountKzt } })).transactionId;

  // The first connection drops right after its first event: the SDK must
  // reconnect with Last-Event-ID and neither lose nor repeat an event.
  let connections = 0;
  const dropping: FetchLike = async (req) => {
    const res = await fetch(req);
    if (!req.url.includes("/admin/events") || ++connections > 1 || !res.body) {
      return res;
    }
    return new Response(cutAfterFirstEvent(res.body), { status: res.status, headers: res.headers });
  };
  const admin = createClient({ baseUrl, token: adminToken, fetch: dropping });
  const path = "/api/fiat/admin/events";

  const tx1 = await transfer(101);
  const ids: string[] = [];
  const byTx = new Map<string, string>();
  const signal = AbortSignal.timeout(20_000);
  let more: string[] = [];
  for await (const m of streamEvents<{ txId?: string }>(admin, path, { query: { recent: 50 }, reconnectDelayMs: 50, signal })) {
    ids.push(m.id);
    const txId = m.event?.data.txId;
    if (m.type === "transfer.completed" && txId) {
      byTx.set(txId, m.id);
    }
    if (byTx.has(tx1) && more.length === 0) {
      more = [await transfer(102), await transfer(103)];
    }
    if (more.length > 0 && more.every((t) => byTx.has(t))) {
      break;
    }
  }
  assert.ok(!signal.aborted, "the stream did not deliver the three transfers within 20 s");
  assert.ok(connections >= 2, `the stream was not reconnected (${connections} connection)`);
  assert.equal(new Set(ids).size, ids.length, "an event id was delivered twice");
  const [id1, id2, id3] = [byTx.get(tx1)!, byTx.get(more[0]!)!, byTx.get(more[1]!)!];
  ok("sse three events across a drop");

  // Resume after the first: the next two come, the first does not.
  const resumed: string[] = [];
  for await (const m of streamEvents(admin, path, { lastEventId: id1, signal: AbortSignal.timeout(15_000) })) {
    resumed.push(m.id);
    if (resumed.includes(id2) && resumed.includes(id3)) {
      break;
    }
  }
  assert.ok(!resumed.includes(id1), "the resume repeated the Last-Event-ID");
  assert.ok(resumed.includes(id2) && resumed.includes(id3), `the resume lost an event: ${resumed.join(",")}`);
  assert.ok(resumed.indexOf(id2) < resumed.indexOf(id3), "the resume reordered events");
  ok("sse resume");

  // A user who is not an admin gets a PlatformError, not a hanging stream.
  await assert.rejects(
    (async () => {
      for await (const _ of streamEvents(gina.client, path, { signal: AbortSignal.timeout(10_000) })) {
        // unreachable
      }
    })(),
    (err) => err instanceof PlatformError && err.status === 403,
  );
  ok("sse forbidden");
}

/** Passes a stream of server-sent events through until its first event (an `id:` message), then fails it. */
function cutAfterFirstEvent(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          ctrl.close();
          return;
        }
        text += decoder.decode(value, { stream: true });
        const m = /(^|\n)id: [^\n]*\n(?:[^\n]+\n)*\n/.exec(text);
        if (m) {
          ctrl.enqueue(new TextEncoder().encode(text.slice(0, m.index + m[0].length)));
          ctrl.error(new Error("connection reset (test)"));
          await reader.cancel();
          return;
        }
      }
    },
    cancel: () => reader.cancel(),
  });
}

/**
 * One typed call in each module of the complete document, as a user whose
 * e-mail is verified (VERIFIED_TOKEN): partner earnings are shown only to
 * verified owners.
 */
async function modules(): Promise<void> {
  const client = createClient({ baseUrl, token: env("VERIFIED_TOKEN") });
  const { id } = await client.GET("/api/auth/me");
  const isObject = (v: unknown) => typeof v === "object" && v !== null;
  const calls: [string, () => Promise<unknown>][] = [
    ["platform", () => client.GET("/api/platform/version")],
    ["auth", async () => assert.equal((await client.GET("/api/auth/me")).id, id)],
    ["fiat", async () => (await client.GET("/api/fiat/wallets")).items],
    ["mask", async () => (await client.GET("/api/mask/masks")).items],
    ["ledger", async () => (await client.GET("/api/ledger/entries", { params: { query: { limit: 1 } } })).items],
    ["reputation", async () => assert.equal((await client.GET("/api/reputation/me")).userId, id)],
    ["gov", async () => (await client.GET("/api/gov/proposals")).items],
    ["charity", async () => (await client.GET("/api/charity/campaigns")).items],
    ["trade", async () => (await client.GET("/api/trade/accounts")).items],
    ["sign", () => client.GET("/api/sign/keys")],
    ["constitution", () => client.GET("/api/constitution/public/countries")],
    ["planet", async () => (await client.GET("/api/planet/constitution-artifacts")).items],
    ["build", () => client.GET("/api/build/projects")],
    ["rights", async () => (await client.GET("/api/rights/royalties")).items],
    ["chess", () => client.GET("/api/chess/upcoming")],
    ["cert", async () => (await client.GET("/api/cert/payouts")).items],
    ["ecosystem", () => client.GET("/api/ecosystem/earnings")],
  ];
  for (const [module, call] of calls) {
    try {
      const got = await call();
      assert.ok(got === undefined || isObject(got), `${module}: ${JSON.stringify(got)}`);
    } catch (err) {
      throw new Error(`the ${module} call failed: ${String(err)}`);
    }
  }
  // A PDF answer is bytes.
  const sliders = { floor: 50, ruleOfLaw: 60, rotation: 40, transparency: 70, multiStatus: 30, skinInGame: 55, polycentricity: 45, positiveSum: 65 };
  const pdf = await client.POST("/api/constitution/pdf", { body: { title: "SDK test", sliders } });
  assert.ok(pdf instanceof Uint8Array, `the PDF is ${typeof pdf}`);
  assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), "%PDF-");
  // An RSS feed is text.
  const rss = await client.GET("/api/build/public/rss/vacancies.xml");
  assert.equal(typeof rss, "string");
  assert.match(rss, /<rss/);
  ok("modules");
}

await transfers();
await pages();
await webhooks();
await events();
await modules();
console.log("ok all");
