import { ConfigError } from "@agentry/config";
import { endLog, type Logger } from "@agentry/logging";
import { type Metrics, type MetricsServer, startMetricsServer, type Tracing } from "@agentry/observability";

/**
 * How much longer than the grace for work in flight a stop may take, for closing stores and flushing telemetry.
 * The deployment manifests give the platform's stop timeout this margin on top of SHUTDOWN_TIMEOUT_MS.
 */
export const STOP_MARGIN_MS = 5_000;

/** How long the last log lines may take to leave before the process exits anyway. */
const FLUSH_MS = 1_000;

export interface ServeOptions {
  logger: Logger;
  /**
   * Starts accepting connections; resolves to what the "listening" line reports: the address (`port` or `url`)
   * and whatever else tells an operator what runs (never a secret).
   */
  listen(): Promise<Record<string, unknown>>;
  /**
   * Stops gracefully, once, on the first SIGTERM or SIGINT: stops accepting, lets work in flight finish within
   * `graceMs`, and closes what the deployable opened (stores, limiters, workers).
   */
  stop(): Promise<void>;
  /**
   * How long work in flight may run once a stop begins (SHUTDOWN_TIMEOUT_MS). A stop still running
   * `graceMs` + STOP_MARGIN_MS after the signal is cut off: the process exits 1 with what is still open.
   */
  graceMs: number;
  /** Prometheus metrics, served on a port of their own while the deployable runs and closed after `stop`. */
  metrics?: { metrics: Metrics; port: number; host: string };
  /** Shut down last, so that the spans of the stop itself are exported. */
  tracing?: Tracing;
}

/**
 * The one lifecycle of every deployable: listens and logs where, then on SIGTERM or SIGINT stops gracefully and
 * exits 0, or 1 when the start or the stop fails or the stop outlasts its bound, with the error logged and the
 * log flushed before the process ends. Resolves once the deployable is listening.
 */
export async function serveUntilSignalled(options: ServeOptions): Promise<void> {
  const { logger } = options;
  let metricsServer: MetricsServer | undefined;
  let listening: Record<string, unknown>;
  try {
    listening = await options.listen();
    if (options.metrics) {
      const { metrics, port, host } = options.metrics;
      metricsServer = await startMetricsServer(metrics, port, host);
    }
  } catch (error) {
    logger.error({ err: error }, "failed to start");
    return exit(logger, 1);
  }

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.info({ signal }, "already shutting down");
      return;
    }
    stopping = true;
    logger.info({ signal }, "shutting down");
    const boundMs = options.graceMs + STOP_MARGIN_MS;
    let timer: NodeJS.Timeout | undefined;
    const cutOff = new Promise<"cut off">((resolve) => {
      timer = setTimeout(() => resolve("cut off"), boundMs);
    });
    const stopped = closeInTurn([
      () => options.stop(),
      async () => metricsServer?.close(),
      async () => options.tracing?.shutdown(),
    ]).then(() => "stopped" as const);
    // A stop that fails after it was cut off is not news: the process is already on its way out.
    stopped.catch(() => undefined);
    try {
      if ((await Promise.race([stopped, cutOff])) === "cut off") {
        logger.error({ boundMs }, "stop did not finish in time; exiting with what is still open");
        return exit(logger, 1);
      }
      logger.info("stopped");
      return exit(logger, 0);
    } catch (error) {
      logger.error({ err: error }, "stop failed");
      return exit(logger, 1);
    } finally {
      clearTimeout(timer);
    }
  };
  // Before the "listening" line: whoever waits for that line to send a signal must find it handled.
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  logger.info(listening, "listening");
  if (metricsServer) logger.info({ url: `${metricsServer.url}/metrics` }, "metrics listening");
}

/**
 * For a deployable's `main().catch(...)`: what fails before it serves (a bad environment, a database it cannot
 * open) stops the process with exit code 1 and one message on stderr, the configuration's one line or the stack.
 */
export function exitOnStartFailure(name: string): (error: unknown) => never {
  return (error) => {
    process.stderr.write(
      error instanceof ConfigError
        ? `${error.message}\n`
        : `${name} failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  };
}

/** Runs each step even when one before it failed (a failed store close still flushes telemetry); rethrows the first error. */
async function closeInTurn(steps: (() => Promise<unknown>)[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/** Exits once the log lines written so far have left (or after FLUSH_MS, when the output is stuck). */
function exit(logger: Logger, code: number): void {
  const done = () => process.exit(code);
  setTimeout(done, FLUSH_MS);
  void endLog(logger).then(done);
}
