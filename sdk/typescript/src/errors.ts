import type { paths } from "./generated/schema.js";
import type { ErrorCode, Method } from "./types.js";

/**
 * A non-2xx answer of the platform. Every error answer of the API carries
 * the envelope `{ error, message, fields? }` and an `X-Request-Id` header;
 * `code` is the envelope's `error`. An answer without the envelope (a proxy's
 * HTML page, say) gets the code `http_<status>` and its text as message.
 */
export class PlatformError<Code extends string = string> extends Error {
  override readonly name = "PlatformError";
  /** The HTTP status. */
  readonly status: number;
  /** The machine-readable error code (the envelope's `error`). */
  readonly code: Code;
  /** Per-field problems of a validation failure (`validation_failed`). */
  readonly fields: Readonly<Record<string, string>>;
  /** The request id to quote to support (`X-Request-Id`, or the body's `requestId`). */
  readonly requestId: string | undefined;
  /** The whole answer body: the envelope object, or the text when it is not JSON. */
  readonly body: unknown;
  /** The method and document path of the call ("POST", "/api/fiat/transfer"). */
  readonly method: string;
  readonly path: string;
  /** Retry-After of a 429 or 503, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(init: {
    status: number;
    code: Code;
    message: string;
    fields?: Record<string, string>;
    requestId?: string;
    body?: unknown;
    method: string;
    path: string;
    retryAfterMs?: number;
  }) {
    super(init.message || `${init.method} ${init.path}: ${init.status} ${init.code}`);
    this.status = init.status;
    this.code = init.code;
    this.fields = init.fields ?? {};
    this.requestId = init.requestId;
    this.body = init.body;
    this.method = init.method;
    this.path = init.path;
    this.retryAfterMs = init.retryAfterMs;
  }

  /**
   * Narrows err to the error of METHOD path, whose `code` is typed as the
   * union of the codes that operation declares:
   *
   *     if (PlatformError.of(err, "POST", "/api/fiat/transfer")?.code === "insufficient_balance") …
   */
  static of<M extends Uppercase<Method>, P extends keyof paths>(
    err: unknown,
    method: M,
    path: P,
  ): PlatformError<ErrorCode<Lowercase<M> & Method, P>> | undefined {
    if (err instanceof PlatformError && err.method === method && err.path === path) {
      return err as PlatformError<ErrorCode<Lowercase<M> & Method, P>>;
    }
    return undefined;
  }

  /** Builds the error of a non-2xx response whose body was read as parsed. */
  static fromResponse(response: Response, parsed: unknown, method: string, path: string): PlatformError {
    const env = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    const code = typeof env?.["error"] === "string" && env["error"] ? env["error"] : `http_${response.status}`;
    let message = typeof env?.["message"] === "string" ? env["message"] : "";
    if (!message) {
      message = typeof parsed === "string" && parsed ? parsed.slice(0, 200) : `${response.status} ${response.statusText}`.trim();
    }
    const fields: Record<string, string> = {};
    const rawFields = env?.["fields"];
    if (typeof rawFields === "object" && rawFields !== null) {
      for (const [k, v] of Object.entries(rawFields)) {
        fields[k] = typeof v === "string" ? v : JSON.stringify(v);
      }
    }
    const bodyID = typeof env?.["requestId"] === "string" ? env["requestId"] : undefined;
    return new PlatformError({
      status: response.status,
      code,
      message,
      fields,
      requestId: response.headers.get("X-Request-Id") ?? bodyID,
      body: parsed,
      method,
      path,
      retryAfterMs: retryAfterMs(response.headers.get("Retry-After")),
    });
  }
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function retryAfterMs(value: string | null): number | undefined {
  if (!value) {
    return undefined;
  }
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.max(ms, 0) : undefined;
}
