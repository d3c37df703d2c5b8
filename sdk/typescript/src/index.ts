// The typed client of the fintech platform API.
//
//   createClient   typed GET/POST/PUT/PATCH/DELETE of every path of the
//                  platform's complete document; returns the body, throws
//                  PlatformError; Idempotency-Key on every write; retries
//   paginate       every item of a { items, nextCursor } list
//   verifyWebhook  a webhook delivery, verified (Standard Webhooks)
//   streamEvents   server-sent events that resume with Last-Event-ID
export { createClient, headerIdempotencyKey, isRestrictedKey, restrictedKeyPrefix } from "./client.js";
export type { Client, ClientOptions, FetchLike, TokenSource } from "./client.js";
export { PlatformError } from "./errors.js";
export { paginate } from "./paginate.js";
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";
export type { PlatformEvent, WebhookHeaders } from "./webhooks.js";
export { streamEvents } from "./events.js";
export type { StreamMessage, StreamOptions } from "./events.js";
export type { ErrorCode, ItemOf, Method, PagedPath, PathOf, RequestInitOf, ResponseBody } from "./types.js";
export type { components, operations, paths } from "./generated/schema.js";
export { documentVersion } from "./generated/operations.js";
