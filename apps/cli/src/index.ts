export { type CliIo, COMMANDS, runCli } from "./cli.js";
export { type CliConfig, loadConfig } from "./config.js";
export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "./errors.js";
