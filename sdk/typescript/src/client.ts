// The client: typed calls of every path of the platform's document that
// return the answer's body and throw PlatformError on anything but a 2xx.
//
// Requests are built by openapi-fetch (path, query and header parameters,
// JSON bodies); this module adds the bearer token or merchant key, an
// Idempotency-Key on every write, retries and the reading of the answer.
import createFetchClient from "openapi-fetch";

import { PlatformError, retryAfterMs } from "./errors.js";
import type { paths } from "./generated/schema.js";
import type { InitArg, Method, PathOf, RequestInitOf, ResponseBody } from "./types.js";

/** A bearer token, or a function asked for it on every request. */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

/** A fetch implementation (globalThis.fetch fits). */
export type FetchLike = (input: Request) => Promise<Response>;

export interface ClientOptions {
  /** The platform's origin, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** JWT sent as `Authorization: Bearer <token>` (from register or login). */
  token?: TokenSource;
  /** Merchant API key sent as `X-API-Key`. */
  apiKey?: string;
  /**
   * A restricted API key (`rk_live_…`, from `POST /api/auth/api-keys`) for a
   * backend: sent as `Authorization: Bearer <key>` when no `token` is set,
   * it acts as its user within its scopes (403 `insufficient_scope` outside them).
   */
  restrictedKey?: string;
  /**
   * How long, in milliseconds from the first attempt, a 503, a 429 or a
   * network error goes on being retried (default 30 000: longer than the
   * platform's failover after a lost machine, about 25 s). A retry that
   * would start later is not made: the last answer is returned (thrown).
   */
  retryBudgetMs?: number;
  /** The most retries within the budget (default unlimited; 0 disables retries). */
  maxRetries?: number;
  /**
   * First backoff in milliseconds, doubled on each retry up to 4 s, with
   * jitter (half of it random), when the answer has no `Retry-After`
   * (default 250). A `Retry-After` is honoured: the retry waits at least
   * that long (plus up to a quarter of it, random, so that clients told
   * the same do not come back together).
   */
  retryDelayMs?: number;
  /**
   * The longest wait before a retry (default 30 000 ms): an answer whose
   * Retry-After asks for longer is not retried early but returned (thrown),
   * its `retryAfterMs` saying when to come back.
   */
  maxRetryDelayMs?: number;
  /** The clock, sleep and randomness of the retries (tests replace them; default Date.now, setTimeout, Math.random). */
  retryClock?: { now(): number; sleep(ms: number): Promise<void>; random(): number };
  /** Makes the Idempotency-Key of a write the caller gave none (default crypto.randomUUID). */
  idempotencyKey?: () => string;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: FetchLike;
}

type Call<M extends Method> = <P extends PathOf<M>, I extends RequestInitOf<M, P>>(
  path: P,
  ...init: InitArg<I>
) => Promise<ResponseBody<M, P>>;

/** A client of the platform: one typed method per HTTP method. */
export interface Client {
  GET: Call<"get">;
  POST: Call<"post">;
  PUT: Call<"put">;
  PATCH: Call<"patch">;
  DELETE: Call<"delete">;
  /** The platform's origin, without a trailing slash. */
  readonly baseUrl: string;
  /** Replaces the bearer token (e.g. after login); undefined removes it. */
  setToken(token: TokenSource | undefined): void;
  /**
   * Sends a request with the client's credentials and returns the raw
   * response: no retries, no reading of the body, no error for a non-2xx.
   * streamEvents uses it; so can calls of paths the document lacks.
   */
  fetchRaw(path: string, init?: RequestInit): Promise<Response>;
}

export const headerIdempotencyKey = "Idempotency-Key";

/** The prefix of every restricted API key. */
export const restrictedKeyPrefix = "rk_live_";

/** Reports whether a string is a restricted API key (rather than a login token). */
export function isRestrictedKey(s: string): boolean {
  return s.startsWith(restrictedKeyPrefix);
}

const writes = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The longest backoff between retries when the answer gives no Retry-After. */
const maxBackoffMs = 4_000;

/** Builds a client. */
export function createClient(opts: ClientOptions): Client {
  const baseUrl = opts.baseUrl.replace(/\/+$/, "");
  const send: FetchLike = opts.fetch ?? ((input) => globalThis.fetch(input));
  const maxRetries = Math.max(0, opts.maxRetries ?? Number.POSITIVE_INFINITY);
  const budgetMs = Math.max(0, opts.retryBudgetMs ?? 30_000);
  const delayMs = opts.retryDelayMs ?? 250;
  const maxDelayMs = opts.maxRetryDelayMs ?? 30_000;
  const clock = opts.retryClock ?? { now: () => Date.now(), sleep: (ms: number) => sleep(ms), random: () => Math.random() };
  // The wait before retry attempt+1: the answer's Retry-After, never less,
  // plus up to a quarter more; else exponential backoff with equal jitter.
  const waitMs = (attempt: number, retryAfter: number | undefined): number => {
    if (retryAfter !== undefined) {
      return retryAfter + clock.random() * retryAfter * 0.25;
    }
    const backoff = Math.min(delayMs * 2 ** attempt, maxBackoffMs);
    return Math.min(backoff / 2 + (clock.random() * backoff) / 2, maxDelayMs);
  };
  const newKey = opts.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  if (opts.restrictedKey !== undefined && !isRestrictedKey(opts.restrictedKey)) {
    throw new TypeError(`restrictedKey must start with ${restrictedKeyPrefix}`);
  }
  let token = opts.token ?? opts.restrictedKey;

  async function authorize(headers: Headers): Promise<void> {
    const bearer = typeof token === "function" ? await token() : token;
    if (bearer && !headers.has("Authorization")) {
      headers.set("Authorization", `Bearer ${bearer}`);
    }
    if (opts.apiKey && !headers.has("X-API-Key")) {
      headers.set("X-API-Key", opts.apiKey);
    }
  }

  // Every write carries a key, so a retry is a replay: the platform answers
  // it with the original result instead of applying it twice.
  async function sendRetrying(request: Request): Promise<Response> {
    await authorize(request.headers);
    if (writes.has(request.method) && !request.headers.has(headerIdempotencyKey)) {
      request.headers.set(headerIdempotencyKey, newKey());
    }
    const start = clock.now();
    // Retry while the wait ends inside the budget.
    const retrying = (attempt: number, wait: number) =>
      attempt < maxRetries && wait <= maxDelayMs && clock.now() + wait - start <= budgetMs && !request.signal.aborted;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await send(request.clone());
      } catch (err) {
        const wait = waitMs(attempt, undefined);
        if (!retrying(attempt, wait)) {
          throw err;
        }
        await clock.sleep(wait);
        continue;
      }
      if (res.status !== 503 && res.status !== 429) {
        return res;
      }
      const wait = waitMs(attempt, retryAfterMs(res.headers.get("Retry-After")));
      if (!retrying(attempt, wait)) {
        return res;
      }
      await res.body?.cancel();
      await clock.sleep(wait);
    }
  }

  const inner = createFetchClient<paths>({ baseUrl, fetch: sendRetrying });

  function method<M extends Method>(m: M): Call<M> {
    const upper = m.toUpperCase() as Uppercase<M>;
    const call = async (path: string, init?: Record<string, unknown>): Promise<unknown> => {
      // parseAs "stream" leaves a 2xx body unread: readBody reads it by its
      // Content-Type. openapi-fetch reads error bodies (JSON or text).
      const opts = { ...(init ?? {}), parseAs: "stream" as const };
      const { error, response } = (await (inner[upper] as (p: string, i: unknown) => Promise<{ error?: unknown; response: Response }>)(
        path,
        opts,
      ));
      if (!response.ok) {
        throw PlatformError.fromResponse(response, error, upper, path);
      }
      return readBody(response, upper, path);
    };
    return call as unknown as Call<M>;
  }

  return {
    GET: method("get"),
    POST: method("post"),
    PUT: method("put"),
    PATCH: method("patch"),
    DELETE: method("delete"),
    baseUrl,
    setToken(next) {
      token = next;
    },
    async fetchRaw(path, init) {
      const request = new Request(baseUrl + path, init);
      await authorize(request.headers);
      return send(request);
    },
  };
}

/**
 * Reads a 2xx body by its Content-Type: JSON parsed, text (HTML, CSV, RSS,
 * XML, JavaScript) as a string, anything else (PDF, images) as bytes; an
 * empty answer is undefined. JSON that does not parse comes back as text.
 */
export async function readBody(response: Response, method: string, path: string): Promise<unknown> {
  if (response.status === 204 || response.status === 205 || method === "HEAD" || !response.body) {
    return undefined;
  }
  const media = (response.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (media === "text/event-stream") {
    await response.body.cancel();
    throw new TypeError(`${method} ${path} answers server-sent events: read it with streamEvents(client, path)`);
  }
  if (media === "application/json" || media.endsWith("+json")) {
    const text = await response.text();
    if (text === "") {
      return undefined;
    }
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (media === "" || media.startsWith("text/") || media === "application/xml" || media.endsWith("+xml") || media === "application/javascript") {
    return response.text();
  }
  return new Uint8Array(await response.arrayBuffer());
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
