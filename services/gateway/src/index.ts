export { buildApp, type LimitsMiddleware, ROUTES } from "./app.js";
export { composeGateway, type Gateway } from "./compose.js";
export { type GatewayConfig, loadGatewayConfig } from "./config.js";
export type { GatewayContext, GatewayState, Principal } from "./context.js";
export { listen, type RunningServer } from "./server.js";
