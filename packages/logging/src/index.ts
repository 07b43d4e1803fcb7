import { AsyncLocalStorage } from "node:async_hooks";
import { type Logger, type LoggerOptions, pino } from "pino";

export type { Logger } from "pino";

/** What every log line written while serving one request carries. */
export interface RequestScope {
  requestId: string;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs fn with the request scope in force, so every log line written inside it names the request. */
export function withRequestScope<T>(value: RequestScope, fn: () => T): T {
  return scope.run(value, fn);
}

/** The request id in force, if any: RPC clients forward it in a header. */
export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

export interface LoggerConfig {
  service: string;
  level?: string;
  /** "json" always writes JSON lines; "pretty" always colours; "auto" colours on a terminal only. */
  format?: "json" | "pretty" | "auto";
  /** Where JSON lines go instead of standard output (tests read them back). */
  destination?: NodeJS.WritableStream;
}

/**
 * One logger per process. Lines are JSON (or pretty on a terminal) and carry the service name and, inside a
 * request, its id. Authorization headers and secrets are redacted wherever they appear.
 */
export function createLogger(config: LoggerConfig): Logger {
  const format = config.format ?? "auto";
  const pretty =
    config.destination === undefined &&
    (format === "pretty" || (format === "auto" && process.stdout.isTTY === true));
  const options: LoggerOptions = {
    level: config.level ?? "info",
    base: { service: config.service },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId ? { requestId } : {};
    },
    redact: {
      paths: [
        "authorization",
        "*.authorization",
        "headers.authorization",
        "*.headers.authorization",
        "secret",
        "*.secret",
      ],
      censor: "[redacted]",
    },
  };
  if (pretty) {
    return pino({
      ...options,
      transport: { target: "pino-pretty", options: { colorize: true, translateTime: "SYS:HH:MM:ss.l" } },
    });
  }
  // Standard output is written asynchronously: lines written while a write is in flight leave together in the
  // next one, instead of one system call per line (the access log writes a line per request). Buffered lines are
  // flushed when the process exits.
  return pino(options, config.destination ?? pino.destination({ dest: 1, sync: false }));
}

/**
 * Resolves once every line logged so far has been written, and ends the logger's output: lines leave
 * asynchronously, and one still on its way when the process exits would be lost or land after later ones. For the
 * last moment of a process only: the logger writes nothing afterwards.
 */
export function endLog(logger: Logger): Promise<void> {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | NodeJS.WritableStream
    | undefined;
  if (!stream || typeof stream.end !== "function") return Promise.resolve();
  return new Promise((resolve) => {
    for (const event of ["finish", "close", "error"]) stream.once(event, () => resolve());
    stream.end();
  });
}

/** A logger that writes nothing, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
export { type Availability, OutageLog, type OutageLogOptions } from "./outage.js";
