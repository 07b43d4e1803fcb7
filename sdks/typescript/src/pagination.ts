import { AgentryError } from "./errors.js";
import type { Pagination } from "./types.js";

/** @internal Fetches the page with the given number. */
export type PageFetcher<T> = (page: number) => Promise<Page<T>>;

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
  async *iterPages(): AsyncGenerator<Page<T>> {
    let page: Page<T> = this;
    yield page;
    while (page.hasNextPage()) {
      page = await page.nextPage();
      yield page;
    }
  }

  /** Every item from this page to the end of the listing. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * What `list()` returns: await it for the first page, or iterate it with `for await` for every item of every
 * page. The request is sent when you do either.
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  #promise: Promise<Page<T>> | undefined;
  readonly #fetchFirst: () => Promise<Page<T>>;

  /** @internal */
  constructor(fetchFirst: () => Promise<Page<T>>) {
    this.#fetchFirst = fetchFirst;
  }

  #page(): Promise<Page<T>> {
    this.#promise ??= this.#fetchFirst();
    return this.#promise;
  }

  /** Resolves to the first page. */
  // biome-ignore lint/suspicious/noThenProperty: PagePromise is awaitable by design, like a Promise.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((page: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#page().then(onfulfilled, onrejected);
  }

  /** Handles a failure to fetch the first page. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#page().catch(onrejected);
  }

  /** Runs `onfinally` once the first page has arrived or failed. */
  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#page().finally(onfinally);
  }

  /** Every item of every page, fetching pages as the loop asks for them. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield* await this.#page();
  }
}
