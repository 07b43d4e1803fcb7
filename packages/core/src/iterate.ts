/** What `mapAsyncIterable` does at each step of the source. */
export interface MapSteps<T, U> {
  /** Each value of the source, as the reader gets it. */
  map(value: T): U;
  /** The source ended. */
  onEnd?(): void;
  /** The source (or `map`) failed: returns the error the reader gets instead. */
  onError?(error: unknown): unknown;
  /** The reader left before the end; the source is closed (its `return`) right after. */
  onLeave?(): void;
  /** Runs each read of the source and its closing, e.g. inside an async context; they run as they are if unset. */
  through?<R>(step: () => Promise<R>): Promise<R>;
}

/**
 * The values of `source` through `steps.map`, with hooks for how the iteration ends. What an async generator
 * with a `for await` loop does, without one: between steps it holds no suspended frame (a generator, its
 * context, its pending promises and their closures), which matters when thousands of streams sit idle. The
 * source is opened on the first read.
 */
export function mapAsyncIterable<T, U>(source: AsyncIterable<T>, steps: MapSteps<T, U>): AsyncIterable<U> {
  const finished: IteratorReturnResult<undefined> = { done: true, value: undefined };
  let iterator: AsyncIterator<T> | undefined;
  let over = false;
  const fail = (error: unknown): never => {
    over = true;
    throw steps.onError ? steps.onError(error) : error;
  };
  const step = (result: IteratorResult<T>): IteratorResult<U> => {
    try {
      if (!result.done) return { done: false, value: steps.map(result.value) };
      if (!over) {
        over = true;
        steps.onEnd?.();
      }
      return finished;
    } catch (error) {
      return fail(error);
    }
  };
  const reader: AsyncIterator<U> = {
    next() {
      if (over) return Promise.resolve(finished);
      let pending: Promise<IteratorResult<T>>;
      try {
        iterator ??= source[Symbol.asyncIterator]();
        const opened = iterator;
        pending = steps.through ? steps.through(() => opened.next()) : opened.next();
      } catch (error) {
        pending = Promise.reject(error);
      }
      return pending.then(step, fail);
    },
    async return() {
      if (!over) {
        over = true;
        steps.onLeave?.();
        const opened = iterator;
        if (opened?.return) await (steps.through ? steps.through(() => opened.return!()) : opened.return());
      }
      return finished;
    },
  };
  return { [Symbol.asyncIterator]: () => reader };
}
