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
  return new MappedIterator(source, steps);
}

const FINISHED: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * One object per iteration, its steps on the prototype: an idle stream passes through several of these, and
 * closures made per iteration (each with its context) would be kept by every one of them for as long as it is
 * open. Iterable once, as a generator is: it is its own iterator.
 */
class MappedIterator<T, U> implements AsyncIterator<U>, AsyncIterable<U> {
  private iterator: AsyncIterator<T> | undefined;
  private over = false;

  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly steps: MapSteps<T, U>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<U> {
    return this;
  }

  next(): Promise<IteratorResult<U>> {
    if (this.over) return Promise.resolve(FINISHED);
    let pending: Promise<IteratorResult<T>>;
    try {
      this.iterator ??= this.source[Symbol.asyncIterator]();
      const opened = this.iterator;
      pending = this.steps.through ? this.steps.through(() => opened.next()) : opened.next();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      (result) => this.step(result),
      (error: unknown) => this.fail(error),
    );
  }

  async return(): Promise<IteratorResult<U>> {
    if (!this.over) {
      this.over = true;
      this.steps.onLeave?.();
      const opened = this.iterator;
      if (opened?.return) {
        await (this.steps.through ? this.steps.through(() => opened.return!()) : opened.return());
      }
    }
    return FINISHED;
  }

  private step(result: IteratorResult<T>): IteratorResult<U> {
    try {
      if (!result.done) return { done: false, value: this.steps.map(result.value) };
      if (!this.over) {
        this.over = true;
        this.steps.onEnd?.();
      }
      return FINISHED;
    } catch (error) {
      return this.fail(error);
    }
  }

  private fail(error: unknown): never {
    this.over = true;
    throw this.steps.onError ? this.steps.onError(error) : error;
  }
}
