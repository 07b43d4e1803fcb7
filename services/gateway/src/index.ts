export { buildApp, type LimitsMiddleware, ROUTES } from "./app.js";
export { type GatewayConfig, gatewayEnvSchema, loadGatewayConfig } from "./config.js";
export type { GatewayContext, GatewayState, Principal } from "./context.js";
export { buildGateway, type Gateway, type GatewayOptions } from "./gateway.js";
export { runGateway } from "./run.js";
export { listen, type RunningServer } from "./server.js";
