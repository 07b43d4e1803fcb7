/** Test helpers: throw-away redis-server processes, and the contract suite every Limiter implementation runs. */
export { limiterContract } from "./limiter-contract.js";
export {
  freePort,
  serverFixture,
  sharedTestRedis,
  startTestRedis,
  type TestRedis,
} from "./redis-server.js";
export { spendMeterContract } from "./spend-contract.js";
