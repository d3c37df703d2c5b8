// Package webhooks serves the outbound webhook endpoints under /api/fiat:
// subscriptions (/me/webhook, /webhook-subs), the admin delivery log and
// retry, and the admin server-sent-event stream with its browser page. The
// routes share the /api/fiat prefix with the fiat module but are registered
// on their own group without group middleware, so each route carries its
// own authentication.
//
// Decisions where the spec and decisions.md are silent:
//
//   - Subscriptions: POST /me/webhook creates the primary endpoint (201) or
//     replaces its url, secret and events keeping its id and createdAt
//     (200). POST /webhook-subs adds further endpoints (201); a user holds at
//     most 10 in all (409 webhook_limit_reached). The answer is
//     { id, url, events, createdAt }; events null means all events; the
//     secret is never returned. PATCH /me/webhook { secret, id? } rotates
//     the primary endpoint's secret, or the one named by id; 404 not_found
//     without one.
//   - Validation (422 validation_failed): url absolute https, at most 2048
//     characters, no user:password, host resolving only to public addresses
//     (private, loopback, link-local, unspecified, multicast and 100.64/10
//     refused; checked again on every connection, against DNS rebinding);
//     WEBHOOK_ALLOW_PRIVATE=1 lifts both rules. secret 16 to 256 characters.
//     events: a non-empty list of the event catalog's types
//     (GET /api/platform/events, schemas.EventCatalog); omitted means all
//     events. Secret left out on create or rotation: the server mints a
//     whsec_ secret (32 random bytes) and returns it once, in that answer.
//   - Matching: a subscription receives the events whose subject is its
//     owner (the envelope's actorUserId or key, data fields userId/*UserId,
//     and the owners of wallets named by data fields walletId/*WalletId/
//     *Wallet, e.g. both sides of transfer.completed); fiat admins'
//     subscriptions receive every event. Only events that occurred after the
//     subscription was created are sent.
//   - Signatures: X-Platform-Timestamp and X-Platform-Signature
//     (sha256=hex HMAC-SHA256 of "ts.body"), plus the Standard Webhooks
//     headers webhook-id (the event id), webhook-timestamp and
//     webhook-signature (v1,base64 HMAC-SHA256 of "id.ts.body"). Both are
//     keyed with the secret's own bytes: an off-the-shelf Standard Webhooks
//     verifier takes the secret as "whsec_" + base64(secret). The body is
//     { data, id, module, sentAt, type } with keys sorted at every level;
//     sentAt is the attempt's time, id is stable across retries.
//   - Delivery log: statuses pending (not yet attempted, or queued again by
//     an admin), failed (retry scheduled), delivered, dead_letter; newest
//     first, filters webhookId and status, cursor pagination. The retry
//     endpoint queues any delivery for an attempt now (202): a dead letter
//     that fails again stays dead_letter.
//   - Owners (issue 25): GET /me/webhooks lists the caller's endpoints (the
//     primary one included, with primary, enabled and updatedAt), newest
//     first; GET|PATCH|DELETE /webhook-subs/:id and DELETE /me/webhook
//     manage one. PATCH takes url, events (null: all), enabled (false
//     pauses: no new deliveries, queued ones wait) and secret (null mints
//     one, returned once). Another user's id, or an id that is not one, is
//     404 not_found. GET /webhook-subs/:id/deliveries (and
//     /me/webhook/deliveries) shows the admin log's rows plus
//     lastDurationMs; POST …/deliveries/:deliveryId/retry queues a failed
//     or dead-lettered delivery (202; pending or delivered: 409
//     invalid_state); POST /webhook-subs/:id/test (and /me/webhook/test)
//     queues a webhook.test event (module webhooks) for that endpoint
//     through the same rows, whatever its events list. Writes are in the
//     write rate-limit class.
//   - A secret "whsec_" + base64 of at least 24 bytes (what the server
//     mints) is keyed with the decoded bytes, for both signatures; any
//     other secret with its own bytes (schemas.WebhookKey).
//   - GET /me/events/stream: the admin stream's format, but only the events
//     about the caller (the matching rules above, without the admins'
//     everything), bearer header only; `platform webhooks listen` reads it.
//   - GET /api/platform/events: the event catalog (schemas.EventCatalog),
//     public, with a JSON Schema of each type's data.
//   - Admin stream: GET /admin/events takes the bearer token from the
//     Authorization header or, because EventSource cannot send headers, a
//     single-use ?ticket= that POST /admin/events/ticket mints (201
//     { ticket, expiresAt }; it works once, within 60 s, for the fiat admin
//     who minted it, and only its SHA-256 is stored). ?access_token= is
//     refused (401): the long-lived token never goes in a URL. It resumes after Last-Event-ID (or
//     ?lastEventId=) from a ring of the last 1000 events the gateway read
//     (each gateway reads every events.* partition without a group, starting
//     20 records before the end, so a resume works across gateway
//     restarts); ?recent=N replays the last N kept events on a fresh
//     connection. The page at GET /admin/stream holds no data: it takes an
//     admin login (with its two-factor code) or a typed token, mints a ticket
//     with the Authorization header and opens the stream with it (fetch(),
//     which unlike EventSource sees every event type), a fresh ticket for
//     each reconnection.
package webhooks
