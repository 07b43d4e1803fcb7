export { availabilityInterceptor } from "./availability.js";
export { errorInterceptor } from "./errors.js";
export {
  createRpcServer,
  type DependencyState,
  type RpcServer,
  type RpcServerOptions,
  servedInterceptors,
} from "./server.js";
