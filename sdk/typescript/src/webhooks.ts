// Verification of the platform's webhook deliveries, with the official
// Standard Webhooks library (standardwebhooks.com): a delivery carries
// webhook-id, webhook-timestamp and webhook-signature ("v1,<base64 of
// HMAC-SHA256(key, id.timestamp.body)>").
import { Webhook } from "standardwebhooks";

/** The body of a webhook delivery and of an admin stream message. */
export interface PlatformEvent<Data = Record<string, unknown>> {
  /** The event id (a KSUID): the same in every delivery attempt and on the stream. */
  id: string;
  /** The event type, e.g. "transfer.completed". */
  type: string;
  /** The module that emitted it, e.g. "fiat". */
  module: string;
  /** When this delivery was sent (RFC 3339, milliseconds). */
  sentAt: string;
  /** The event's own fields. */
  data: Data;
}

/** Headers as fetch (Headers), Node's http (IncomingHttpHeaders) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** A delivery that is not signed with the secret, is too old or is not a platform event. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

const prefix = "whsec_";

/**
 * Verifies a webhook delivery and returns its event; throws
 * WebhookVerificationError otherwise. rawBody must be the body exactly as
 * received (before any JSON parsing). The secret is taken exactly as the
 * API showed it or as you gave it to the API: a `whsec_<base64>` secret is
 * the Standard Webhooks key it encodes; any other string signs with its own
 * UTF-8 bytes (the platform's endpoint secrets). A timestamp more than five
 * minutes away from now is rejected (replays). During a secret rotation's
 * overlap pass both secrets (an array): either one verifies.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  secret: string | readonly string[],
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
): PlatformEvent<Data> {
  // Several secrets: a receiver that rotates accepts the old and the new
  // one for the overlap (PATCH …/webhook expiresIn).
  const secrets = typeof secret === "string" ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => !s)) {
    throw new WebhookVerificationError("empty webhook secret");
  }
  const body = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody);
  const std = {
    "webhook-id": header(headers, "webhook-id"),
    "webhook-timestamp": header(headers, "webhook-timestamp"),
    "webhook-signature": header(headers, "webhook-signature"),
  };
  if (!std["webhook-id"] || !std["webhook-timestamp"] || !std["webhook-signature"]) {
    throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header");
  }
  let lastErr: unknown;
  for (const key of secrets.flatMap(keysOf)) {
    try {
      const event = new Webhook(key, { format: "raw" }).verify(body, std);
      return checkEvent<Data>(event);
    } catch (err) {
      if (err instanceof WebhookVerificationError) {
        throw err;
      }
      lastErr = err;
    }
  }
  throw new WebhookVerificationError(lastErr instanceof Error ? lastErr.message : "signature does not verify");
}

/**
 * The keys a secret may stand for: a whsec_ secret first as the key it
 * encodes, then (a secret someone chose that merely looks like one) as
 * its own bytes.
 */
function keysOf(secret: string): Uint8Array[] {
  const own = new TextEncoder().encode(secret);
  if (!secret.startsWith(prefix)) {
    return [own];
  }
  const b64 = secret.slice(prefix.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) {
    return [own];
  }
  try {
    const bin = atob(b64);
    return [Uint8Array.from(bin, (c) => c.charCodeAt(0)), own];
  } catch {
    return [own]; // not base64 after all
  }
}

function header(headers: WebhookHeaders, name: string): string {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? "";
  }
  const rec = headers as Record<string, string | string[] | undefined>;
  for (const [k, v] of Object.entries(rec)) {
    if (k.toLowerCase() === name) {
      return Array.isArray(v) ? v.join(" ") : v ?? "";
    }
  }
  return "";
}

function checkEvent<Data>(event: unknown): PlatformEvent<Data> {
  const e = event as Partial<PlatformEvent<Data>> | null;
  if (typeof e !== "object" || e === null || typeof e.id !== "string" || typeof e.type !== "string") {
    throw new WebhookVerificationError("the verified body is not a platform event");
  }
  return e as PlatformEvent<Data>;
}
