import type { ConversationStore } from "@agentry/conversation";
import type { RegistryStore } from "@agentry/registry";

/** What a command gets from the CLI around it; commands never touch process globals. */
export interface CommandContext {
  /** Writes lines to standard output. */
  print(...lines: string[]): void;
  printJson(value: unknown): void;
  /** Prints this command's help. */
  printHelp(): void;
  /** The registry store, opened on first use (so a wrong command line never touches it) and closed by the CLI. */
  store(): Promise<RegistryStore>;
  /** The conversation store (history and usage), opened on first use and closed by the CLI, as `store`. */
  conversations(): Promise<ConversationStore>;
  now(): Date;
  /** The service's public origin, for links the command prints. */
  publicBaseUrl(): string;
  /** A path given on the command line, absolute: relative ones are relative to where the user ran the CLI. */
  path(file: string): string;
}

export interface Command {
  group: string;
  /** Empty for a command that is its group's only one, run as `agentry <group>`. */
  name: string;
  /** What follows `agentry <group> <name>` in the usage line. */
  synopsis: string;
  summary: string;
  /** The rest of the help: what it does, its options, examples. */
  help: string;
  run(args: string[], context: CommandContext): Promise<void>;
}
