// Types derived from the generated document types: what a call of a path
// and method sends, answers on success and may answer as an error.
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from "openapi-typescript-helpers";
import type { MaybeOptionalInit } from "openapi-fetch";

import type { paths } from "./generated/schema.js";

/** The methods the client offers, as the document names them. */
export type Method = "get" | "put" | "post" | "delete" | "patch";

/** Every path of the document that has the given method. */
export type PathOf<M extends Method> = PathsWithMethod<paths, M>;

/** The operation object of METHOD path. */
export type OperationOf<M extends Method, P extends keyof paths> = M extends keyof paths[P]
  ? NonNullable<paths[P][M]>
  : never;

/** The second argument of a call: params (path, query, header), body, headers, signal… */
export type RequestInitOf<M extends Method, P extends keyof paths> = M extends HttpMethod
  ? MaybeOptionalInit<paths[P], M>
  : never;

/** The rest parameter of a call: optional when the operation needs nothing. */
export type InitArg<I> = RequiredKeysOf<NonNullable<I>> extends never ? [init?: I] : [init: I];

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 205 | 206 | 207 | "2XX";

type ResponsesOf<Op> = Op extends { responses: infer R } ? R : never;

/** The content map of the 2xx answers of an operation (undefined when they carry none). */
type SuccessContent<Op> = {
  [S in keyof ResponsesOf<Op>]: S extends SuccessStatus
    ? ResponsesOf<Op>[S] extends { content: infer C }
      ? C
      : undefined
    : never;
}[keyof ResponsesOf<Op>];

type ErrorContent<Op> = {
  [S in keyof ResponsesOf<Op>]: S extends SuccessStatus
    ? never
    : ResponsesOf<Op>[S] extends { content: infer C }
      ? C
      : never;
}[keyof ResponsesOf<Op>];

/** How a media type is read: JSON is parsed, text is a string, anything else is bytes. */
type BodyOfMedia<K, V> = K extends "application/json" | `application/${string}+json`
  ? V
  : K extends `text/${string}` | "application/xml" | `application/${string}+xml` | "application/javascript"
    ? string
    : Uint8Array;

type BodyOfContent<C> = C extends undefined
  ? undefined
  : { [K in keyof C]: BodyOfMedia<K, C[K]> }[keyof C];

/** What a successful call of METHOD path resolves to. */
export type ResponseBody<M extends Method, P extends keyof paths> = BodyOfContent<SuccessContent<OperationOf<M, P>>>;

type ErrorCodesOf<C> = C extends { "application/json": infer B }
  ? B extends { error: unknown }
    ? NonNullable<B["error"]>
    : never
  : never;

/**
 * The error codes METHOD path declares in the document (every non-2xx
 * answer's `error` enum); `string` where it declares none.
 */
export type ErrorCode<M extends Method, P extends keyof paths> = [ErrorCodesOf<ErrorContent<OperationOf<M, P>>>] extends [never]
  ? string
  : ErrorCodesOf<ErrorContent<OperationOf<M, P>>> & string;

/** The GET paths whose answer is a `{ items, nextCursor }` page. */
export type PagedPath = {
  [P in PathOf<"get">]: ResponseBody<"get", P> extends { items: unknown[] } ? P : never;
}[PathOf<"get">];

/** One item of the page GET path answers. */
export type ItemOf<P extends PagedPath> = ResponseBody<"get", P> extends { items: (infer T)[] } ? T : never;
