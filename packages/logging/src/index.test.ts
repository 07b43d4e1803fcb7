import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, currentRequestId, withRequestScope } from "./index.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ service: "test", format: "json", destination }) };
}

describe("logging", () => {
  it("stamps every line inside a request scope with its id, across awaits", async () => {
    const { lines, logger } = capture();
    logger.info("outside");
    await withRequestScope({ requestId: "req_1" }, async () => {
      logger.info("before");
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.child({ service: "registry" }).info("after");
      expect(currentRequestId()).toBe("req_1");
    });
    expect(lines.map((line) => [line.msg, line.requestId])).toEqual([
      ["outside", undefined],
      ["before", "req_1"],
      ["after", "req_1"],
    ]);
    expect(lines[0]?.service).toBe("test");
  });

  it("redacts authorization headers and secrets", () => {
    const { lines, logger } = capture();
    logger.info({ headers: { authorization: "Bearer agentry_sk_x" }, secret: "s3cret" }, "call");
    expect(JSON.stringify(lines)).not.toContain("agentry_sk_x");
    expect(JSON.stringify(lines)).not.toContain("s3cret");
  });
});
