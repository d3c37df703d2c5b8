// The typed client of the fintech platform API.
//
// Types come from the platform's OpenAPI document (src/generated, regenerated
// by `make sdk`); requests go through openapi-fetch. The client adds:
//   - auth: `Authorization: Bearer <token>` and/or `X-API-Key` (merchant keys),
//   - an `Idempotency-Key` on every money-moving write that has none,
//   - retries of 503 answers with the same request, so with the same key: the
//     platform answers a replay with the original result, never twice.
import createClient, { type Client, type Middleware } from "openapi-fetch";

import { moneyWrites } from "./generated/operations.js";
import type { paths } from "./generated/schema.js";

export type { components, operations, paths } from "./generated/schema.js";
export { documentVersion, moneyWrites } from "./generated/operations.js";

/** A bearer token, or a function asked for it on every request. */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface PlatformClientOptions {
  /** The platform's origin, e.g. "https://api.example.com". */
  baseUrl: string;
  /** JWT sent as `Authorization: Bearer <token>` (from register or login). */
  token?: TokenSource;
  /** Merchant API key sent as `X-API-Key`. */
  apiKey?: string;
  /** How many times a 503 is retried (default 3; 0 disables retries). */
  retries?: number;
  /** First backoff in milliseconds, doubled on each retry (default 250). A `Retry-After` header wins. */
  retryDelayMs?: number;
  /** Makes an Idempotency-Key for a money write the caller gave none (default crypto.randomUUID). */
  idempotencyKey?: () => string;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: (input: Request) => Promise<Response>;
}

/** The openapi-fetch client over the platform's paths, plus token handling. */
export type PlatformClient = Client<paths> & {
  /** Replaces the bearer token (e.g. after login); undefined removes it. */
  setToken(token: TokenSource | undefined): void;
};

export const headerIdempotencyKey = "Idempotency-Key";

/** Builds a client. */
export function createPlatformClient(opts: PlatformClientOptions): PlatformClient {
  const baseFetch = opts.fetch ?? ((input: Request) => globalThis.fetch(input));
  const retries = Math.max(0, opts.retries ?? 3);
  const delay = opts.retryDelayMs ?? 250;
  const newKey = opts.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  let token = opts.token;

  const client = createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ""),
    fetch: (request) => fetchRetrying503(request, baseFetch, retries, delay),
  });

  const middleware: Middleware = {
    async onRequest({ request, schemaPath }) {
      const bearer = typeof token === "function" ? await token() : token;
      if (bearer && !request.headers.has("Authorization")) {
        request.headers.set("Authorization", `Bearer ${bearer}`);
      }
      if (opts.apiKey && !request.headers.has("X-API-Key")) {
        request.headers.set("X-API-Key", opts.apiKey);
      }
      if (isMoneyWrite(request.method, schemaPath) && !request.headers.has(headerIdempotencyKey)) {
        request.headers.set(headerIdempotencyKey, newKey());
      }
      return request;
    },
  };
  client.use(middleware);

  return Object.assign(client, {
    setToken(next: TokenSource | undefined) {
      token = next;
    },
  });
}

/** Reports whether METHOD schemaPath (e.g. "POST", "/api/fiat/transfer") moves money. */
export function isMoneyWrite(method: string, schemaPath: string): boolean {
  return moneyWrites.has(`${method.toUpperCase()} ${schemaPath}`);
}

/**
 * Sends request, and resends the same request (same headers, so the same
 * Idempotency-Key, and same body) while the platform answers 503, at most
 * `retries` times. Only reads and keyed writes are retried: a write without
 * a key could be applied twice.
 */
async function fetchRetrying503(
  request: Request,
  send: (input: Request) => Promise<Response>,
  retries: number,
  delayMs: number,
): Promise<Response> {
  const safe = request.method === "GET" || request.method === "HEAD" || request.headers.has(headerIdempotencyKey);
  const attempts = safe ? retries : 0;
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= attempts;
    const res = await send(last ? request : request.clone());
    if (res.status !== 503 || last) {
      return res;
    }
    await res.body?.cancel();
    await sleep(retryAfterMs(res.headers.get("Retry-After")) ?? delayMs * 2 ** attempt);
  }
}

/** Parses Retry-After (seconds or an HTTP date), capped at 30 s. */
function retryAfterMs(value: string | null): number | undefined {
  if (!value) {
    return undefined;
  }
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 30_000) : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
