export { buildApp, type LimitsMiddleware, ROUTES } from "./app.js";
export { type GatewayConfig, gatewayEnvSchema, loadGatewayConfig } from "./config.js";
export type { GatewayContext, GatewayState, Principal } from "./context.js";
export { buildGateway, createSpendMeter, type Gateway, type GatewayOptions } from "./gateway.js";
// The request frame's parts, the key check and the limits, for the benchmark of the per-request floor.
export { Authenticator } from "./http/auth.js";
export { accessLogger, requestFrame, writeAccessLogOnClose } from "./http/frame.js";
export { limitsMiddleware } from "./http/limits.js";
export { allowedMethods, requestTemplate } from "./http/methods.js";
export { requestIdOf } from "./http/request-id.js";
export { routesOf } from "./http/route-index.js";
export { runGateway } from "./run.js";
export { listen, type RunningServer } from "./server.js";
