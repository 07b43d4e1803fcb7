import type { Logger } from "@agentry/logging";

/** Reports a download as it goes: a bar on a terminal, a log line every tenth otherwise. */
export interface Progress {
  /** Total bytes received so far. */
  update(received: number): void;
  /** The download ended, complete or not. */
  end(): void;
}

export interface ProgressOptions {
  label: string;
  /** Undefined when the server did not say. */
  totalBytes: number | undefined;
  logger: Logger;
  /** A terminal to draw on; undefined writes log lines instead. */
  terminal: NodeJS.WriteStream | undefined;
}

const BAR_WIDTH = 28;
const REDRAW_MS = 100;
const MIB = 1024 * 1024;

export function createProgress(options: ProgressOptions): Progress {
  return options.terminal ? terminalProgress(options, options.terminal) : logProgress(options);
}

/** The terminal progress when standard error is one, else none (the log lines say it instead). */
export function terminalOf(stream: NodeJS.WriteStream = process.stderr): NodeJS.WriteStream | undefined {
  return stream.isTTY ? stream : undefined;
}

function terminalProgress(options: ProgressOptions, terminal: NodeJS.WriteStream): Progress {
  const startedAt = performance.now();
  let drawnAt = 0;
  let last = 0;
  const draw = (received: number) => {
    const total = options.totalBytes;
    const seconds = Math.max((performance.now() - startedAt) / 1000, 0.001);
    const rate = `${(received / MIB / seconds).toFixed(1)} MiB/s`;
    const size = total ? `${mib(received)}/${mib(total)} MiB` : `${mib(received)} MiB`;
    let bar = "";
    if (total) {
      const filled = Math.min(BAR_WIDTH, Math.round((received / total) * BAR_WIDTH));
      const percent = Math.min(100, Math.floor((received / total) * 100));
      bar = `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}% `;
    }
    terminal.write(`\r${options.label} ${bar}${size} ${rate}\u001b[K`);
  };
  return {
    update(received) {
      last = received;
      const now = performance.now();
      if (now - drawnAt < REDRAW_MS) return;
      drawnAt = now;
      draw(received);
    },
    end() {
      draw(last);
      terminal.write("\n");
    },
  };
}

function logProgress(options: ProgressOptions): Progress {
  const { logger, label, totalBytes } = options;
  let reported = -1;
  let last = 0;
  logger.info({ model: label, totalBytes }, "downloading the model");
  return {
    update(received) {
      last = received;
      if (!totalBytes) return;
      const tenth = Math.floor((received / totalBytes) * 10);
      if (tenth <= reported || tenth >= 10) return;
      reported = tenth;
      if (tenth > 0)
        logger.info(
          { model: label, receivedBytes: received, totalBytes, percent: tenth * 10 },
          "downloading the model",
        );
    },
    end() {
      logger.info({ model: label, receivedBytes: last, totalBytes }, "model download ended");
    },
  };
}

function mib(bytes: number): string {
  return (bytes / MIB).toFixed(1);
}
