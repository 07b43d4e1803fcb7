import type {
  DescMessage,
  DescMethodServerStreaming,
  MessageInitShape,
  MessageShape,
} from "@bufbuild/protobuf";
import type { CallOptions, Transport } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";

/**
 * A client's server-streaming method, as Connect's `createClient` makes it (same signature: the call starts on
 * the first read, `onHeader` is called with the response headers), without its wrapper: a down-levelled async
 * generator that holds about twenty closures, promises and bound functions for as long as the stream is open.
 * Leaving the iteration early (`return`) closes the call.
 */
export function serverStreamingFn<I extends DescMessage, O extends DescMessage>(
  transport: Transport,
  method: DescMethodServerStreaming<I, O>,
): (input: MessageInitShape<I>, options?: CallOptions) => AsyncIterable<MessageShape<O>> {
  return (input, options) => {
    let messages: AsyncIterator<MessageShape<O>> | undefined;
    let opened: Promise<AsyncIterator<MessageShape<O>>> | undefined;
    const open = () =>
      transport
        .stream(
          method,
          options?.signal,
          options?.timeoutMs,
          options?.headers,
          createAsyncIterable([input]),
          options?.contextValues,
        )
        .then((response) => {
          options?.onHeader?.(response.header);
          messages = response.message[Symbol.asyncIterator]();
          return messages;
        });
    const reader: AsyncIterator<MessageShape<O>> = {
      next: () => {
        if (messages) return messages.next();
        opened ??= open();
        return opened.then((iterator) => iterator.next());
      },
      return: async () => {
        await messages?.return?.();
        return { done: true, value: undefined };
      },
    };
    return { [Symbol.asyncIterator]: () => reader };
  };
}
