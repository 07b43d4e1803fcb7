export { type Deployable, type DeployableProcess, startDeployable } from "./process.js";
