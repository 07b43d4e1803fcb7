import { readFile, stat, writeFile } from "node:fs/promises";
import { CHARACTER_BOUNDS, exportCharacter, type FieldIssue, importCharacter } from "@agentry/characters";
import { isId, type ProviderName } from "@agentry/core";
import type { AgentRecord, RegistryStore } from "@agentry/registry";
import { parseCommandArgs } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { FailureError, UsageError } from "../errors.js";
import { findAccount } from "./keys.js";

/** What became of one file of `agents import`. */
interface FileOutcome {
  file: string;
  agentId?: string;
  name?: string;
  warnings: FieldIssue[];
  problems: FieldIssue[];
}

const MAX_BYTES = CHARACTER_BOUNDS.fileMaxBytes;

/** A file's content as JSON, or the problem that keeps it from being one. */
async function readCharacterFile(at: string): Promise<{ json: unknown } | { problem: FieldIssue }> {
  const problem = (issue: string) => ({ problem: { field: "file", issue } });
  try {
    // The same bound as the service's body limit, so a file imports here exactly when it would over REST.
    if ((await stat(at)).size > MAX_BYTES) return problem(`is larger than ${MAX_BYTES} bytes (1 MiB)`);
    const text = await readFile(at, "utf8");
    try {
      return { json: JSON.parse(text) as unknown };
    } catch {
      return problem("is not valid JSON");
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return problem(code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "unknown error"})`);
  }
}

function describeIssues(issues: readonly FieldIssue[]): string {
  return issues.map((issue) => `${issue.field}: ${issue.issue}`).join("; ");
}

function outcomeLine(outcome: FileOutcome, dryRun: boolean): string {
  if (outcome.problems.length > 0) return `${outcome.file}: failed: ${describeIssues(outcome.problems)}`;
  const done = dryRun ? `would create '${outcome.name}'` : `${outcome.agentId}`;
  const count = outcome.warnings.length;
  if (count === 0) return `${outcome.file}: ${done}`;
  const fields = outcome.warnings.map((warning) => warning.field).join(", ");
  return `${outcome.file}: ${done} (${count} warning${count === 1 ? "" : "s"}: ${fields}; --json shows them)`;
}

export const agentsImport: Command = {
  group: "agents",
  name: "import",
  synopsis: "FILE... --account NAME [--dry-run] [--json]",
  summary: "Create agents from elizaOS character files",
  help: `Creates an agent in the account from each elizaOS character file (v0.x, 1.x, or an export of this
service), mapped exactly as POST /v1/agents/import maps it, and prints a line per file: the new agent's id and
the fields with warnings, or every problem of the file by JSON path. The account's agent quota applies. The
command fails (exit 1) when any file failed; the files that passed are created all the same.

The CLI works on the store, without the service: whether the service serves the file's model provider and
model is not checked here (a message to the agent says so if it does not).

Options:
  --account NAME   The account's name (or id)
  --dry-run        Check the files and print what would be created; store nothing
  --json           Print [{file, agentId, warnings, problems}] instead of lines

Example:
  agentry agents import characters/*.json --account acme`,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      args,
      { account: { type: "string" }, "dry-run": { type: "boolean" }, json: { type: "boolean" } },
      ["FILE..."],
    );
    if (values.help) return context.printHelp();
    if (values.account === undefined || values.account.trim() === "")
      throw new UsageError("missing --account NAME");
    const dryRun = values["dry-run"] === true;

    const store = await context.store();
    const account = await findAccount(store, values.account.trim());
    const outcomes: FileOutcome[] = [];
    for (const file of positionals) {
      const outcome: FileOutcome = { file, warnings: [], problems: [] };
      outcomes.push(outcome);
      const read = await readCharacterFile(context.path(file));
      if ("problem" in read) {
        outcome.problems.push(read.problem);
        continue;
      }
      const result = importCharacter(read.json);
      if (!result.ok) {
        outcome.problems.push(...result.issues);
        continue;
      }
      outcome.warnings = result.warnings;
      outcome.name = result.agent.name;
      if (dryRun) continue;
      try {
        outcome.agentId = (await store.createAgent(account.id, result.agent)).id;
      } catch (error) {
        // Over quota, most likely: this file fails, the others are still tried.
        outcome.problems.push({
          field: "file",
          issue: error instanceof Error ? error.message : String(error),
        });
      }
    }

    if (values.json) context.printJson(outcomes);
    else context.print(...outcomes.map((outcome) => outcomeLine(outcome, dryRun)));
    const failed = outcomes.filter((outcome) => outcome.problems.length > 0).length;
    if (failed > 0) throw new FailureError(`${failed} of ${outcomes.length} files failed`);
  },
};

/** The agent with this id, whichever account holds it: the admin works across accounts. */
async function findAgent(store: RegistryStore, id: string): Promise<AgentRecord> {
  for (const account of await store.listAccounts()) {
    const agent = await store.getAgent(account.id, id);
    if (agent) return agent;
  }
  throw new FailureError(`no agent with id '${id}'`);
}

function characterOf(agent: AgentRecord) {
  return exportCharacter({ ...agent, modelProvider: agent.modelProvider as ProviderName | null });
}

export const agentsExport: Command = {
  group: "agents",
  name: "export",
  synopsis: "AGENT_ID [--out FILE]",
  summary: "Write an agent as an elizaOS character file",
  help: `Writes the agent as an elizaOS 1.x character file, as GET /v1/agents/{agentId}/character does: to
standard output, or to FILE. Importing the file gives back an equal agent. Secrets are never written.

Options:
  --out FILE   Write the file there instead of to standard output

Example:
  agentry agents export agt_01JD0S3V6Q8Y1J7K2M4N5P6R7S --out eliza.character.json`,
  async run(args, context: CommandContext) {
    const { values, positionals } = parseCommandArgs(args, { out: { type: "string" } }, ["AGENT_ID"]);
    if (values.help) return context.printHelp();
    const id = (positionals[0] ?? "").trim();
    if (!isId("agent", id)) throw new UsageError(`'${id}' is not an agent id (agt_…)`);
    if (values.out !== undefined && values.out.trim() === "") throw new UsageError("--out needs a FILE");

    const agent = await findAgent(await context.store(), id);
    const text = `${JSON.stringify(characterOf(agent), null, 2)}\n`;
    if (values.out === undefined) {
      context.print(text.trimEnd());
      return;
    }
    await writeFile(context.path(values.out), text);
    context.print(`Wrote agent ${agent.id} (${agent.name}) to ${values.out}.`);
  },
};
