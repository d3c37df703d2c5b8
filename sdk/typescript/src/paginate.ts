import type { Client } from "./client.js";
import type { InitArg, ItemOf, PagedPath, RequestInitOf } from "./types.js";

/**
 * Iterates over every item of a `{ items, nextCursor }` list, asking for
 * the next page (`?cursor=<nextCursor>`, with the caller's other query
 * parameters such as `limit`) until a page has no nextCursor:
 *
 *     for await (const tx of paginate(client, "/api/fiat/transactions", { params: { query: { limit: 100 } } })) …
 */
export async function* paginate<P extends PagedPath, I extends RequestInitOf<"get", P>>(
  client: Client,
  path: P,
  ...init: InitArg<I>
): AsyncGenerator<ItemOf<P>, void, undefined> {
  const base = (init[0] ?? {}) as { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const query = { ...(base.params?.query ?? {}), ...(cursor ? { cursor } : {}) };
    const next = { ...base, params: { ...(base.params ?? {}), query } };
    const page = (await (client.GET as (p: string, i: unknown) => Promise<unknown>)(path, next)) as {
      items?: ItemOf<P>[];
      nextCursor?: string | null;
    };
    for (const item of page.items ?? []) {
      yield item;
    }
    cursor = page.nextCursor ?? undefined;
    // A cursor seen before would loop forever: the list ends there.
    if (!cursor || seen.has(cursor)) {
      return;
    }
    seen.add(cursor);
  }
}
