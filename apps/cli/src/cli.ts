import path from "node:path";
import type { ConversationStore } from "@agentry/conversation";
import { CLI_STAMP, withAuditStamp } from "@agentry/core";
import type { RegistryStore } from "@agentry/registry";
import type { Command, CommandContext } from "./command.js";
import { accountsCreate, accountsList, accountsUpdate } from "./commands/accounts.js";
import { agentsExport, agentsImport } from "./commands/agents.js";
import { consoleLink } from "./commands/console.js";
import { keysCreate, keysList, keysRevoke } from "./commands/keys.js";
import { membersInvite, membersList, membersRemove, membersSetRole } from "./commands/members.js";
import { usage } from "./commands/usage.js";
import { type CliConfig, loadConfig } from "./config.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./errors.js";
import { openConversations, openStore } from "./store.js";

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Readonly<Record<string, string | undefined>>;
  /** Where a relative DATA_DIR is resolved when INIT_CWD is not set; the process's directory by default. */
  cwd?: string;
  /** Opens the registry store; the backend chosen by the configuration by default. */
  openStore?: (config: CliConfig) => Promise<RegistryStore>;
  /** Opens the conversation store; the backend chosen by the configuration by default. */
  openConversationStore?: (config: CliConfig) => Promise<ConversationStore>;
}

const PROGRAM = "agentry";

export const COMMANDS: readonly Command[] = [
  accountsCreate,
  accountsList,
  accountsUpdate,
  keysCreate,
  keysList,
  keysRevoke,
  membersList,
  membersInvite,
  membersSetRole,
  membersRemove,
  agentsImport,
  agentsExport,
  consoleLink,
  usage,
];

const GROUPS = [...new Set(COMMANDS.map((command) => command.group))];

const HELP_WORDS = new Set(["help", "--help", "-h"]);

/** `group name`, or `group` for a group's only command. */
function commandWords(command: Command): string {
  return command.name ? `${command.group} ${command.name}` : command.group;
}

function commandPath(command: Command): string {
  return `${PROGRAM} ${commandWords(command)}`;
}

/** The command that is its group's only one, run by the group's name alone. */
function soleCommand(group: string): Command | undefined {
  return COMMANDS.find((command) => command.group === group && command.name === "");
}

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => commandWords(command).length));
  return `${PROGRAM}: administer Agentry (accounts, API keys, agents from character files) and read its usage

Usage:
  ${PROGRAM} <group> <command> [options]

Commands:
${COMMANDS.map((command) => `  ${commandWords(command).padEnd(width)}  ${command.summary}`).join("\n")}

Run '${PROGRAM} <group> <command> --help' for a command's options.

Environment:
  DATA_DIR       Directory of the stores (default ./data, relative to the current directory)
  DATABASE_URL   The services' Postgres database, when they use one instead of DATA_DIR
  PUBLIC_BASE_URL  Where the service is reached, for console sign-in links (default http://localhost:$PORT)

Exit codes: 0 success, 1 the command failed, 2 the command line is wrong.
`;
}

function groupHelp(group: string): string {
  const sole = soleCommand(group);
  if (sole) return commandHelp(sole);
  const commands = COMMANDS.filter((command) => command.group === group);
  return `Usage:
${commands.map((command) => `  ${commandPath(command)} ${command.synopsis}`).join("\n")}

Commands:
${commands.map((command) => `  ${command.name.padEnd(8)}  ${command.summary}`).join("\n")}

Run '${PROGRAM} ${group} <command> --help' for a command's options.
`;
}

function commandHelp(command: Command): string {
  return `Usage: ${commandPath(command)} ${command.synopsis}

${command.help}
`;
}

/** The help asked for by `help`, `--help` or `-h` after zero, one or two words; null when the words are wrong. */
function helpFor(words: readonly string[]): string | null {
  const [group, name, ...rest] = words;
  if (group === undefined) return mainHelp();
  if (!GROUPS.includes(group)) return null;
  if (name === undefined) return groupHelp(group);
  if (soleCommand(group)) return null;
  const command = COMMANDS.find((candidate) => candidate.group === group && candidate.name === name);
  return command && rest.length === 0 ? commandHelp(command) : null;
}

type Resolved =
  | { kind: "help"; text: string }
  | { kind: "mistake"; line: string }
  | { kind: "command"; command: Command; args: string[] };

/** What a command line asks for: help, a command with its own arguments, or nothing that exists. */
function resolve(argv: readonly string[]): Resolved {
  const [group, name, ...args] = argv;
  const help = (words: string[]): Resolved => {
    const text = helpFor(words);
    return text === null
      ? { kind: "mistake", line: `${PROGRAM}: no help for '${words.join(" ")}'` }
      : { kind: "help", text };
  };

  if (group === undefined) {
    return { kind: "mistake", line: `${PROGRAM}: missing command (run '${PROGRAM} --help' for usage)` };
  }
  if (HELP_WORDS.has(group)) return help(argv.slice(1));
  if (!GROUPS.includes(group)) {
    return {
      kind: "mistake",
      line: `${PROGRAM}: unknown command '${group}' (run '${PROGRAM} --help' for usage)`,
    };
  }
  const sole = soleCommand(group);
  if (sole) {
    if (name !== undefined && HELP_WORDS.has(name)) return help([group, ...args]);
    return { kind: "command", command: sole, args: argv.slice(1) };
  }
  const names = COMMANDS.filter((command) => command.group === group).map((command) => command.name);
  if (name === undefined) {
    return {
      kind: "mistake",
      line: `${PROGRAM} ${group}: missing command, one of ${names.join(", ")} (run '${PROGRAM} ${group} --help' for usage)`,
    };
  }
  if (HELP_WORDS.has(name)) return help([group, ...args]);
  const command = COMMANDS.find((candidate) => candidate.group === group && candidate.name === name);
  if (!command) {
    return {
      kind: "mistake",
      line: `${PROGRAM} ${group}: unknown command '${name}', expected one of ${names.join(", ")}`,
    };
  }
  return { kind: "command", command, args };
}

/**
 * Runs one command line (without the program name) and returns the exit code: 0 success, 1 the command failed,
 * 2 the command line is wrong. Every mistake is one line on stderr. The store is opened only once the command
 * line is known to be right, and always closed before returning.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const resolved = resolve(argv);
  switch (resolved.kind) {
    case "help":
      io.stdout.write(resolved.text);
      return EXIT_OK;
    case "mistake":
      io.stderr.write(`${resolved.line}\n`);
      return EXIT_USAGE;
    case "command":
      return execute(resolved.command, resolved.args, io);
  }
}

async function execute(command: Command, args: string[], io: CliIo): Promise<number> {
  const fail = (message: string, code: number) => {
    io.stderr.write(`${commandPath(command)}: ${message}\n`);
    return code;
  };
  let store: Promise<RegistryStore> | undefined;
  let conversations: Promise<ConversationStore> | undefined;
  const config = () => loadConfig(io.env, io.cwd ?? process.cwd());
  const context: CommandContext = {
    print: (...lines) => {
      io.stdout.write(lines.map((line) => `${line}\n`).join(""));
    },
    printJson: (value) => {
      io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
    printHelp: () => {
      io.stdout.write(commandHelp(command));
    },
    store: () => {
      store ??= (io.openStore ?? openStore)(config());
      return store;
    },
    conversations: () => {
      conversations ??= (io.openConversationStore ?? openConversations)(config());
      return conversations;
    },
    now: () => new Date(),
    publicBaseUrl: () => config().publicBaseUrl,
    // pnpm runs the CLI in its package directory and says in INIT_CWD where the user ran it.
    path: (file) => path.resolve(io.env.INIT_CWD ?? io.cwd ?? process.cwd(), file),
  };

  let code: number;
  try {
    // Every change a command makes through the stores is on the audit log as the CLI's (docs/api/audit.md).
    await withAuditStamp(CLI_STAMP, () => command.run(args, context));
    code = EXIT_OK;
  } catch (error) {
    code =
      error instanceof UsageError
        ? fail(`${error.message} (run '${commandPath(command)} --help' for usage)`, EXIT_USAGE)
        : fail(messageOf(error), EXIT_FAILURE);
  }
  for (const opening of [store, conversations]) {
    if (!opening) continue;
    // A store that failed to open has been reported above; one that opened must close, or the command failed.
    const opened = await opening.catch(() => null);
    try {
      await opened?.close();
    } catch (error) {
      if (code === EXIT_OK) code = fail(messageOf(error), EXIT_FAILURE);
    }
  }
  return code;
}

/** Store and configuration errors carry messages meant for people; a stack trace would not help an admin. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
