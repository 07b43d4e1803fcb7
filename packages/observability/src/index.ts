export { metricsEnv } from "./env.js";
export { type HttpObservation, observeHttpRequest } from "./http.js";
export { codeName, Metrics, type RpcSide, type StreamKind } from "./metrics.js";
export { type MetricsServer, startMetricsServer } from "./metrics-server.js";
export { REQUEST_ID_HEADER, requestScopeInterceptor, rpcInterceptors } from "./rpc.js";
export {
  failSpan,
  initTracing,
  inSpan,
  SpanKind,
  type Tracing,
  type TracingOptions,
  traceMethods,
  tracer,
} from "./tracing.js";
