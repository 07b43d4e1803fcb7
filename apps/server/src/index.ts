export { composeServer, type Server } from "./compose.js";
export { loadServerConfig, type ServerConfig } from "./config.js";
