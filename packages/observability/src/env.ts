import { z } from "@agentry/config";

/** An unset variable and an empty one (`METRICS_PORT=` in a compose file) mean the same. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === "" ? undefined : value), schema.optional());

/**
 * The variables every service reads for its metrics, to spread into its configuration schema. Without
 * METRICS_PORT no metrics are collected or served; tracing is configured by the standard OTEL_* variables
 * (see `initTracing`).
 */
export const metricsEnv = {
  /** Port of the Prometheus endpoint (`GET /metrics`, HTTP/1.1); 0 picks a free one. Unset: no metrics. */
  METRICS_PORT: optional(z.coerce.number().int().min(0).max(65535)),
  /** Interface of the metrics port; the service's own host when unset. */
  METRICS_HOST: optional(z.string().min(1)),
};
