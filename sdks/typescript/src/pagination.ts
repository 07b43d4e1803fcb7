import type { RequestOptions, Transport } from "./core.js";
import { AgentryError } from "./errors.js";
import type { CursorPagination, Pagination } from "./types.js";

/** @internal Fetches the page with the given number. */
export type PageFetcher<T> = (page: number) => Promise<Page<T>>;

/** Every page from `first` to the last, fetched one at a time as the loop asks for them. */
async function* pagesFrom<P extends { hasNextPage(): boolean; nextPage(): Promise<P> }>(
  first: P,
): AsyncGenerator<P> {
  let page = first;
  yield page;
  while (page.hasNextPage()) {
    page = await page.nextPage();
    yield page;
  }
}

/**
 * One page of a listing. Iterating it (`for await`) walks every item from this page to the end of the listing,
 * fetching the next pages as it goes. Pages are numbered: items created or deleted while you iterate can shift
 * between pages, so an item may be seen twice or not at all.
 */
export class Page<T> implements AsyncIterable<T> {
  /** The items of this page. */
  readonly data: T[];
  /** Where this page sits in the listing. */
  readonly pagination: Pagination;
  readonly #fetchPage: PageFetcher<T>;

  /** @internal */
  constructor(data: T[], pagination: Pagination, fetchPage: PageFetcher<T>) {
    this.data = data;
    this.pagination = pagination;
    this.#fetchPage = fetchPage;
  }

  /** Whether another page follows this one. */
  hasNextPage(): boolean {
    return this.pagination.hasMore && this.data.length > 0;
  }

  /** Fetches the next page, with the same query; throws `AgentryError` when there is none. */
  nextPage(): Promise<Page<T>> {
    if (!this.hasNextPage()) return Promise.reject(new AgentryError("There is no next page."));
    return this.#fetchPage(this.pagination.page + 1);
  }

  /** Every page from this one to the last, fetched one at a time as the loop asks for them. */
  iterPages(): AsyncGenerator<Page<T>> {
    return pagesFrom<Page<T>>(this);
  }

  /** Every item from this page to the end of the listing. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/** @internal The part of a cursor-paged list's query that says where a page is. */
export interface CursorQuery {
  before?: string | undefined;
  after?: string | undefined;
  order?: "asc" | "desc" | undefined;
}

/** @internal A cursor-paged list's answer. */
export interface CursorEnvelope<T> {
  data: T[];
  pagination: CursorPagination;
}

/**
 * One page of a cursor-paged list (history, the delivery log). Iterating it (`for await`) walks every item from
 * this page to the end of the list, fetching the next pages as it goes. Cursors are item ids, so items added
 * while you iterate never shift the pages: a list read newest first simply does not show messages that arrive
 * meanwhile, and one read oldest first shows them at its end.
 */
export class CursorPage<T extends { id: string }> implements AsyncIterable<T> {
  /** The items of this page, in the order asked for. */
  readonly data: T[];
  /** The page size, and whether more items lie beyond this page. */
  readonly pagination: CursorPagination;
  readonly #fetchNext: () => Promise<CursorPage<T>>;

  /** @internal */
  constructor(data: T[], pagination: CursorPagination, fetchNext: () => Promise<CursorPage<T>>) {
    this.data = data;
    this.pagination = pagination;
    this.#fetchNext = fetchNext;
  }

  /** Whether another page follows this one. */
  hasNextPage(): boolean {
    return this.pagination.hasMore && this.data.length > 0;
  }

  /**
   * Fetches the next page: the same query, its cursor moved past this page (in the usual cases, `before` the last
   * item when reading newest first, `after` it when reading oldest first). Throws `AgentryError` when there is
   * none.
   */
  nextPage(): Promise<CursorPage<T>> {
    if (!this.hasNextPage()) return Promise.reject(new AgentryError("There is no next page."));
    return this.#fetchNext();
  }

  /** Every page from this one to the last, fetched one at a time as the loop asks for them. */
  iterPages(): AsyncGenerator<CursorPage<T>> {
    return pagesFrom<CursorPage<T>>(this);
  }

  /** Every item from this page to the end of the list. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * The query of the page after one holding `data`. A page moves toward older items when it was asked `before` a
 * cursor, or with neither cursor and newest first; otherwise toward newer ones. Its next page lies past its
 * oldest, or newest, item, which is the last one shown unless the order and the direction disagree.
 */
function nextCursorQuery<Q extends CursorQuery>(query: Q, data: readonly { id: string }[]): Q {
  const newestFirst = query.order !== "asc";
  const towardOlder = query.before !== undefined || (query.after === undefined && newestFirst);
  const first = data[0]!.id;
  const last = data[data.length - 1]!.id;
  const { before: _before, after: _after, ...rest } = query;
  return (
    towardOlder
      ? { ...rest, before: newestFirst ? last : first }
      : { ...rest, after: newestFirst ? first : last }
  ) as Q;
}

/**
 * @internal Fetches the page of a cursor-paged list that `query` names, with `load` (one request); each next
 * page is fetched the same way with the cursor moved.
 */
export async function fetchCursorPage<T extends { id: string }, Q extends CursorQuery>(
  query: Q,
  load: (query: Q) => Promise<CursorEnvelope<T>>,
): Promise<CursorPage<T>> {
  const body = await load(query);
  return new CursorPage(body.data, body.pagination, () =>
    fetchCursorPage(nextCursorQuery(query, body.data), load),
  );
}

/**
 * @internal A cursor-paged `list()` of the resource at `path`: each page is one GET with the list's query (its
 * filters and page size as given), its cursor moved past the page before.
 */
export function listCursorPages<T extends { id: string }>(
  transport: Transport,
  path: string,
  params: CursorQuery,
  options?: RequestOptions,
): CursorPagePromise<T> {
  return new PagePromise(() =>
    fetchCursorPage(
      params,
      async (query) =>
        (await transport.json({ method: "GET", path, query: { ...query } }, options)) as CursorEnvelope<T>,
    ),
  );
}

/**
 * What `list()` returns: await it for the first page, or iterate it with `for await` for every item of every
 * page. The request is sent when you do either.
 */
export class PagePromise<T, P extends AsyncIterable<T> = Page<T>>
  implements PromiseLike<P>, AsyncIterable<T>
{
  #promise: Promise<P> | undefined;
  readonly #fetchFirst: () => Promise<P>;

  /** @internal */
  constructor(fetchFirst: () => Promise<P>) {
    this.#fetchFirst = fetchFirst;
  }

  #page(): Promise<P> {
    this.#promise ??= this.#fetchFirst();
    return this.#promise;
  }

  /** Resolves to the first page. */
  // biome-ignore lint/suspicious/noThenProperty: PagePromise is awaitable by design, like a Promise.
  then<R1 = P, R2 = never>(
    onfulfilled?: ((page: P) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#page().then(onfulfilled, onrejected);
  }

  /** Handles a failure to fetch the first page. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<P | R> {
    return this.#page().catch(onrejected);
  }

  /** Runs `onfinally` once the first page has arrived or failed. */
  finally(onfinally?: (() => void) | null): Promise<P> {
    return this.#page().finally(onfinally);
  }

  /** Every item of every page, fetching pages as the loop asks for them. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield* await this.#page();
  }
}

/** What a cursor-paged `list()` returns: await it for the first `CursorPage`, or iterate it for every item. */
export type CursorPagePromise<T extends { id: string }> = PagePromise<T, CursorPage<T>>;

/** @internal Every item of a listing, in one array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
