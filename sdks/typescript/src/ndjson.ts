/** A body that ended before its last line did: the response was cut short. */
export class IncompleteLineError extends Error {
  override name = "IncompleteLineError";
}

/**
 * Reads a newline-delimited body line by line as its chunks arrive, holding only the line in progress. Bytes are
 * decoded as UTF-8 across chunk boundaries; blank lines are skipped. Every line must end with a newline: text
 * after the last one means the body was cut, and throws `IncompleteLineError`. `onChunk` runs for every chunk
 * received, so a caller can time out a body that has gone silent. Stopping early cancels the body, which closes
 * the connection.
 */
export async function* readLines(
  body: ReadableStream<Uint8Array>,
  onChunk?: () => void,
): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let partial = "";
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      const lines = (partial + decoder.decode(value, { stream: true })).split("\n");
      partial = lines.pop()!;
      for (const line of lines) if (line.trim() !== "") yield line;
    }
    partial += decoder.decode();
    if (partial.trim() !== "") {
      throw new IncompleteLineError(`the body ended in the middle of a line (${partial.length} characters)`);
    }
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
