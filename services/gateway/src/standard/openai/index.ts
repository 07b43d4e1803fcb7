export { openAiFrame } from "./frame.js";
export { openAiOperations } from "./openapi.js";
export { openAiRoutes } from "./routes.js";
