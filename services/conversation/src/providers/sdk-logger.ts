import type { Logger } from "@agentry/logging";

type LogFn = (message: string, ...rest: unknown[]) => void;

/** The SDKs' logger shape, writing into ours so their warnings are JSON lines with the request id. */
export function sdkLogger(logger: Logger): { error: LogFn; warn: LogFn; info: LogFn; debug: LogFn } {
  const write =
    (level: "error" | "warn" | "info" | "debug"): LogFn =>
    (message, ...rest) => {
      if (rest.length > 0) logger[level]({ sdk: rest.map(describe) }, message);
      else logger[level](message);
    };
  return { error: write("error"), warn: write("warn"), info: write("info"), debug: write("debug") };
}

function describe(value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
