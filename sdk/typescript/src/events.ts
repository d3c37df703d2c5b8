// Server-sent events over fetch (not EventSource): the token travels in the
// Authorization header, never in the URL, and a dropped stream resumes
// with Last-Event-ID.
import { createParser, type EventSourceMessage } from "eventsource-parser";

import { sleep, type Client } from "./client.js";
import { PlatformError } from "./errors.js";
import type { PlatformEvent } from "./webhooks.js";

/** One message of the stream. */
export interface StreamMessage<Data = Record<string, unknown>> {
  /** The event id: pass the last one seen as lastEventId to resume after it. */
  id: string;
  /** The event type (the SSE `event:` field), e.g. "transfer.completed". */
  type: string;
  /** The `data:` field as sent. */
  data: string;
  /** The data parsed as a platform event, or undefined when it is not one. */
  event: PlatformEvent<Data> | undefined;
}

export interface StreamOptions {
  /** Resume after this event id (sent as Last-Event-ID). */
  lastEventId?: string;
  /** Extra query parameters, e.g. { recent: 10 } to start with the last ten events. */
  query?: Record<string, string | number>;
  /** Ends the iteration. Breaking out of a for-await loop ends it too. */
  signal?: AbortSignal;
  /** Wait before reconnecting; default the server's `retry:` (3 s on the admin stream). */
  reconnectDelayMs?: number;
  /** Consecutive failed connection attempts before the iterator throws (default 5). */
  maxReconnects?: number;
}

/** How many delivered ids are remembered to drop repeats after a reconnect. */
const rememberIds = 10_000;

/**
 * Iterates over the server-sent events of path (e.g. "/api/fiat/admin/events").
 * When the stream ends or the connection drops, it reconnects with
 * Last-Event-ID set to the last id it delivered, so the server resumes
 * right after it: no event is lost, and an id already delivered is never
 * delivered again. A 4xx (auth_required, forbidden, …) throws PlatformError.
 */
export async function* streamEvents<Data = Record<string, unknown>>(
  client: Client,
  path: string,
  opts: StreamOptions = {},
): AsyncGenerator<StreamMessage<Data>, void, undefined> {
  let last = opts.lastEventId;
  let serverRetry = 3000;
  const maxFailures = opts.maxReconnects ?? 5;
  const seen = new Set<string>();
  let failures = 0;
  const url = path + queryString(opts.query);

  while (!opts.signal?.aborted) {
    const headers = new Headers({ Accept: "text/event-stream", "Cache-Control": "no-cache" });
    if (last) {
      headers.set("Last-Event-ID", last);
    }
    let res: Response | undefined;
    try {
      res = await client.fetchRaw(url, { headers, signal: opts.signal ?? null });
    } catch (err) {
      if (opts.signal?.aborted) {
        return;
      }
      if (++failures > maxFailures) {
        throw err;
      }
    }
    if (res && !res.ok) {
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: the error carries the text
      }
      const err = PlatformError.fromResponse(res, parsed, "GET", path);
      if ((res.status < 500 && res.status !== 429) || ++failures > maxFailures) {
        throw err;
      }
      res = undefined;
    }
    if (res?.body) {
      const media = (res.headers.get("Content-Type") ?? "").split(";")[0]!.trim();
      if (media !== "text/event-stream") {
        await res.body.cancel();
        throw new TypeError(`${path} answered ${media || "no Content-Type"}, not text/event-stream`);
      }
      const queue: EventSourceMessage[] = [];
      const parser = createParser({
        onEvent: (m) => queue.push(m),
        onRetry: (ms) => {
          serverRetry = ms;
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          let chunk: ReadableStreamReadResult<string>;
          try {
            chunk = await reader.read();
          } catch {
            break; // the connection dropped: reconnect
          }
          if (chunk.done) {
            break;
          }
          failures = 0;
          parser.feed(chunk.value);
          while (queue.length > 0) {
            const m = queue.shift()!;
            if (!m.id) {
              continue; // the platform's events always have ids; others cannot be resumed
            }
            if (seen.has(m.id)) {
              continue;
            }
            remember(seen, m.id);
            last = m.id;
            yield { id: m.id, type: m.event ?? "message", data: m.data, event: parseEvent<Data>(m.data) };
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    }
    if (opts.signal?.aborted) {
      return;
    }
    await sleep(opts.reconnectDelayMs ?? serverRetry, opts.signal).catch(() => undefined);
  }
}

function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > rememberIds) {
    const oldest = seen.values().next().value;
    if (oldest !== undefined) {
      seen.delete(oldest);
    }
  }
}

function parseEvent<Data>(data: string): PlatformEvent<Data> | undefined {
  try {
    const v = JSON.parse(data) as Partial<PlatformEvent<Data>> | null;
    return v && typeof v === "object" && typeof v.id === "string" && typeof v.type === "string" ? (v as PlatformEvent<Data>) : undefined;
  } catch {
    return undefined;
  }
}

function queryString(query: Record<string, string | number> | undefined): string {
  if (!query || Object.keys(query).length === 0) {
    return "";
  }
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    q.set(k, String(v));
  }
  return `?${q.toString()}`;
}
