/** Test helpers: an OTLP collector stub and a reader of Prometheus scrapes. */
export { type CollectedSpan, decodeTraces, OtlpCollector } from "./otlp-collector.js";
export { sampleValue, scrape } from "./prometheus.js";
