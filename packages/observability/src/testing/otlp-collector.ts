import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { BinaryReader, type WireType } from "@bufbuild/protobuf/wire";

/** One span as an OTLP collector received it. */
export interface CollectedSpan {
  /** `service.name` of the resource that sent it. */
  service: string;
  name: string;
  /** Hex, as in `traceparent`. */
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** Milliseconds from the span's start to its end. */
  durationMs: number;
  /** String, integer and boolean attributes. */
  attributes: Record<string, string | number | boolean>;
}

/**
 * A stand-in for an OpenTelemetry collector: `POST /v1/traces` with an OTLP http/protobuf body, decoded into
 * `spans`. Set `OTEL_EXPORTER_OTLP_ENDPOINT` to its `url`.
 */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  private server: Server | undefined;
  url = "";

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (part: Buffer) => parts.push(part));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces") {
          res.writeHead(404).end();
          return;
        }
        try {
          this.spans.push(...decodeTraces(new Uint8Array(Buffer.concat(parts))));
        } catch {
          res.writeHead(400).end();
          return;
        }
        // An empty ExportTraceServiceResponse: full success.
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** Resolves once a span satisfying `match` has arrived (polling), or rejects after `timeoutMs`. */
  async waitFor(match: (span: CollectedSpan) => boolean, timeoutMs = 10_000): Promise<CollectedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error("no matching span reached the collector in time");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Calls `field` for each field of one message. */
function fields(
  bytes: Uint8Array,
  field: (reader: BinaryReader, fieldNo: number, wireType: WireType) => void,
) {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    const before = reader.pos;
    field(reader, fieldNo, wireType);
    if (reader.pos === before) reader.skip(wireType, fieldNo);
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function keyValue(bytes: Uint8Array): [string, string | number | boolean | undefined] {
  let key = "";
  let value: string | number | boolean | undefined;
  fields(bytes, (reader, fieldNo) => {
    if (fieldNo === 1) key = reader.string();
    else if (fieldNo === 2) {
      fields(reader.bytes(), (any, anyField) => {
        if (anyField === 1) value = any.string();
        else if (anyField === 2) value = any.bool();
        else if (anyField === 3) value = Number(any.int64());
        else if (anyField === 4) value = any.double();
      });
    }
  });
  return [key, value];
}

function attributesOf(list: Uint8Array[]): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const bytes of list) {
    const [key, value] = keyValue(bytes);
    if (value !== undefined) attributes[key] = value;
  }
  return attributes;
}

/** Decodes an ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1). */
export function decodeTraces(body: Uint8Array): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  fields(body, (reader, fieldNo) => {
    if (fieldNo !== 1) return;
    let service = "";
    const scopeSpans: Uint8Array[] = [];
    fields(reader.bytes(), (resourceSpans, rsField) => {
      if (rsField === 1) {
        const resourceAttributes: Uint8Array[] = [];
        fields(resourceSpans.bytes(), (resource, resourceField) => {
          if (resourceField === 1) resourceAttributes.push(resource.bytes());
        });
        service = String(attributesOf(resourceAttributes)["service.name"] ?? "");
      } else if (rsField === 2) scopeSpans.push(resourceSpans.bytes());
    });
    for (const scope of scopeSpans) {
      fields(scope, (scopeReader, scopeField) => {
        if (scopeField !== 2) return;
        const span: CollectedSpan = {
          service,
          name: "",
          traceId: "",
          spanId: "",
          parentSpanId: "",
          kind: 0,
          durationMs: 0,
          attributes: {},
        };
        let start = 0n;
        let end = 0n;
        const attributes: Uint8Array[] = [];
        fields(scopeReader.bytes(), (s, spanField) => {
          if (spanField === 1) span.traceId = hex(s.bytes());
          else if (spanField === 2) span.spanId = hex(s.bytes());
          else if (spanField === 4) span.parentSpanId = hex(s.bytes());
          else if (spanField === 5) span.name = s.string();
          else if (spanField === 6) span.kind = s.int32();
          else if (spanField === 7) start = BigInt(s.fixed64());
          else if (spanField === 8) end = BigInt(s.fixed64());
          else if (spanField === 9) attributes.push(s.bytes());
        });
        span.attributes = attributesOf(attributes);
        span.durationMs = Number(end - start) / 1e6;
        spans.push(span);
      });
    }
  });
  return spans;
}
