import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { heartbeatFor } from "./heartbeat.js";
import { EventStream } from "./sse.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves one stream written by `write`, and returns what a client received. */
async function receive(write: (stream: EventStream, res: ServerResponse) => Promise<void>) {
  server = createServer((_req, res) => {
    const stream = new EventStream(res, 40);
    stream.open();
    void write(stream, res).then(() => stream.close());
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise<{ headers: IncomingMessage["headers"]; body: string }>((resolve, reject) => {
    request({ port, host: "127.0.0.1" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ headers: res.headers, body }));
    })
      .on("error", reject)
      .end();
  });
}

describe("EventStream", () => {
  it("numbers events from 1 and names them", async () => {
    const { headers, body } = await receive(async (stream) => {
      stream.send("message.started", { id: "msg_1" });
      stream.send("message.delta", { text: "hi" });
    });
    expect(headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(headers["x-accel-buffering"]).toBe("no");
    expect(body).toBe(
      'id: 1\nevent: message.started\ndata: {"id":"msg_1"}\n\nid: 2\nevent: message.delta\ndata: {"text":"hi"}\n\n',
    );
  });

  it("writes a ping comment after each interval of silence, and none while events flow", async () => {
    const { body } = await receive(async (stream) => {
      for (let i = 0; i < 4; i++) {
        await new Promise((resolve) => setTimeout(resolve, 15));
        stream.send("message.delta", { text: String(i) });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    });
    const beforeSilence = body.slice(0, body.lastIndexOf("event:"));
    expect(beforeSilence).not.toContain(": ping");
    const pings = body.split("\n").filter((line) => line === ": ping").length;
    expect(pings).toBeGreaterThanOrEqual(2);
    // A closed stream no longer holds a place on the shared heartbeat.
    expect(heartbeatFor(40).size).toBe(0);
  });

  it("hands each event to the connection at once, not at the end of the tick", async () => {
    const corked: number[] = [];
    const { body } = await receive(async (stream, res) => {
      stream.send("message.started", { id: "msg_1" });
      corked.push(res.socket!.writableCorked);
      stream.send("message.delta", { text: "hi" });
      corked.push(res.socket!.writableCorked);
    });
    expect(corked).toEqual([0, 0]);
    expect(body).toContain("event: message.delta");
  });
});
