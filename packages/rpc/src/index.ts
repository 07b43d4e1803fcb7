export { availabilityInterceptor } from "./availability.js";
export { errorInterceptor } from "./errors.js";
export { createH2Transport, type H2Transport, type H2TransportOptions } from "./h2-transport.js";
export { createInProcessTransport, type InProcessTransportOptions } from "./in-process.js";
export {
  exitOnStartFailure,
  type ServeOptions,
  STOP_MARGIN_MS,
  serveUntilSignalled,
} from "./lifecycle.js";
export { type MigrationConfig, runMigrationCommand } from "./migrate.js";
export { probeReadiness, type RemoteService, remoteService } from "./remote.js";
export {
  createRpcServer,
  type DependencyState,
  type RpcServer,
  type RpcServerOptions,
  servedInterceptors,
} from "./server.js";
