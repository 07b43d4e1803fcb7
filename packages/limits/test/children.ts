import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./fixtures/limiter-child.ts", import.meta.url));

export interface Child {
  process: ChildProcess;
  /** Tells the child to start and resolves with its one report. */
  go(): Promise<Record<string, number>>;
}

/** Forks a child gateway process and waits until its limiter is connected. */
export async function forkLimiterChild(args: string[]): Promise<Child> {
  const child = fork(script, args, {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`limiter child exited early (${String(code)})`);
  });
  exited.catch(() => {});
  const [ready] = (await Promise.race([once(child, "message"), exited])) as [unknown];
  if ((ready as { ready?: boolean }).ready !== true) throw new Error("limiter child did not report ready");
  return {
    process: child,
    async go() {
      const report = once(child, "message");
      child.send("go");
      const [message] = (await Promise.race([report, exited])) as [Record<string, number>];
      return message;
    },
  };
}
