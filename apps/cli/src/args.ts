import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./errors.js";

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

function isParseArgsError(error: unknown): error is Error & { code: string } {
  return error instanceof Error && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS_");
}

/** Node's messages go on to explain `--`; the first sentence is the part that helps here. */
function firstSentence(message: string): string {
  const sentence = message.split(". ")[0] ?? message;
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}

/**
 * Parses one command's arguments strictly (every command also takes --help) and checks the number of positional
 * arguments against their names; any mistake becomes a UsageError. A last name ending in `...` takes any number
 * of arguments, at least one.
 */
export function parseCommandArgs<const O extends OptionsConfig>(
  args: string[],
  options: O,
  positionalNames: readonly string[] = [],
) {
  let parsed: ReturnType<typeof parse<O>>;
  try {
    parsed = parse(args, options);
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(firstSentence(error.message));
    throw error;
  }
  if ((parsed.values as { help?: boolean }).help) return parsed;
  const { positionals } = parsed;
  if (positionals.length < positionalNames.length) {
    throw new UsageError(`missing ${positionalNames.slice(positionals.length).join(" ")}`);
  }
  if (positionalNames.at(-1)?.endsWith("...")) return parsed;
  if (positionals.length > positionalNames.length) {
    throw new UsageError(`unexpected argument '${positionals[positionalNames.length]}'`);
  }
  return parsed;
}

function parse<const O extends OptionsConfig>(args: string[], options: O) {
  return parseArgs({
    args,
    options: { ...options, ...HELP_OPTION },
    strict: true,
    allowPositionals: true,
  });
}
