import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AGENT_BOUNDS,
  FALLBACK_MAX_ITEMS,
  GENERATION_BOUNDS,
  MESSAGE_BOUNDS,
  SCOPES,
  TIER_DEFAULTS,
  WEBHOOK_BOUNDS,
} from "@agentry/core";
import { ERROR_CODES, httpStatusOf } from "@agentry/errors";
import { describe, expect, it } from "vitest";

/*
 * The API's rules live in docs/api, and comments, READMEs and OpenAPI descriptions cite them as
 * `docs/api/<page>.md, "<section>"`. These checks keep the pointers from rotting: no file cites a rules file
 * outside the repository, and every cited page, section heading and Markdown anchor exists.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Folders that hold no sources of ours: dependencies, build output, generated code, local data. */
const SKIPPED_DIRS = new Set([
  "node_modules",
  ".git",
  "dist",
  "gen",
  "data",
  "coverage",
  ".turbo",
  "__pycache__",
  ".pytest_cache",
  ".venv",
  "vendor",
]);
const TEXT_FILE = /\.(ts|tsx|js|mjs|cjs|json|md|proto|py|go|rb|ya?ml|sh|toml|txt|html|css)$|^Dockerfile/;
const LARGEST_FILE = 2 * 1024 * 1024;

/** Every text file of the repository, as a path relative to its root. */
function repositoryFiles(dir = ROOT, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) repositoryFiles(path, found);
    } else if (entry.isFile() && TEXT_FILE.test(entry.name) && statSync(path).size <= LARGEST_FILE) {
      found.push(relative(ROOT, path));
    }
  }
  return found;
}

/** The lines' positions of a match, for messages that say where to fix. */
function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function headings(markdown: string): string[] {
  return [...markdown.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((match) => match[1] as string);
}

/**
 * A citation of a rules page: its path, then optionally `#anchor`, or `, "Section"` (the quotes possibly escaped,
 * as in JSON, and the section possibly on the next line of a comment).
 */
const CITATION =
  /(?<![\w/.-])docs\/api\/([\w./-]+\.md)(?:#([\w-]+))?(?:,(?:\s|\*|#|\/\/)*\\?"([^"\\\n]+)\\?")?/g;

/**
 * A Markdown link to a Markdown file, relative to the file that holds it, optionally with an anchor or followed
 * by `, "Section"`. Those that lead into docs/ are checked.
 */
const MARKDOWN_LINK = /\]\(((?:\.{1,2}\/)*[\w./-]+\.md)(?:#([\w-]+))?\)(?:,\s*"([^"\n]+)")?/g;

const files = repositoryFiles();
const texts = new Map(files.map((file) => [file, readFileSync(join(ROOT, file), "utf8")]));

function page(path: string): string | undefined {
  return texts.get(path);
}

describe("the API's rules in docs/api", () => {
  it("are found among the repository's files", () => {
    expect(files).toContain("docs/api/README.md");
    expect(files.filter((file) => file.startsWith("docs/api/")).length).toBeGreaterThan(5);
  });

  it("are cited, never a rules file outside the repository", () => {
    const outside = "decisions" + ".md";
    const citing = files.flatMap((file) => {
      const text = texts.get(file) ?? "";
      const index = text.indexOf(outside);
      return index === -1 ? [] : [`${file}:${lineOf(text, index)}`];
    });
    expect(citing, `cite the page of docs/api that states the rule instead of ${outside}`).toEqual([]);
  });

  it("are cited by pages and sections that exist", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [file, text] of texts) {
      for (const match of text.matchAll(CITATION)) {
        checked++;
        const [, path, anchor, section] = match;
        const where = `${file}:${lineOf(text, match.index)}`;
        const target = page(`docs/api/${path}`);
        if (target === undefined) {
          broken.push(`${where}: docs/api/${path} does not exist`);
          continue;
        }
        const titles = headings(target);
        if (section !== undefined && !titles.includes(section)) {
          broken.push(
            `${where}: docs/api/${path} has no section "${section}" (it has: ${titles.join("; ")})`,
          );
        }
        if (anchor !== undefined && !titles.some((title) => slug(title) === anchor)) {
          broken.push(`${where}: docs/api/${path} has no heading for #${anchor}`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it("are linked from Markdown by paths, anchors and sections that exist", () => {
    const broken: string[] = [];
    for (const [file, text] of texts) {
      if (!file.endsWith(".md")) continue;
      for (const match of text.matchAll(MARKDOWN_LINK)) {
        const [, link, anchor, section] = match;
        const path = relative(ROOT, resolve(ROOT, dirname(file), link as string));
        if (!path.startsWith("docs/")) continue;
        const target = page(path);
        const where = `${file}:${lineOf(text, match.index)}`;
        if (target === undefined) {
          broken.push(`${where}: ${link} does not exist`);
          continue;
        }
        const titles = headings(target);
        if (anchor !== undefined && !titles.some((title) => slug(title) === anchor)) {
          broken.push(`${where}: ${link} has no heading for #${anchor}`);
        }
        if (section !== undefined && !titles.includes(section)) {
          broken.push(`${where}: ${link} has no section "${section}"`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("are all reachable from the index", () => {
    const index = page("docs/api/README.md") ?? "";
    const pages = files.filter((file) => file.startsWith("docs/api/") && file !== "docs/api/README.md");
    const unlisted = pages.filter((file) => !index.includes(`](${file.slice("docs/api/".length)})`));
    expect(unlisted).toEqual([]);
  });

  it("state the codes, scopes, limits and bounds the code enforces", () => {
    const section = (path: string, title: string) => {
      const text = page(path) ?? "";
      const start = text.indexOf(`## ${title}\n`);
      expect(start, `${path} has a section "${title}"`).toBeGreaterThanOrEqual(0);
      const end = text.indexOf("\n## ", start + 1);
      return text.slice(start, end === -1 ? undefined : end);
    };
    const number = (value: number) => value.toLocaleString("en-US");

    const codes = section("docs/api/errors-and-status-codes.md", "Status codes per error code");
    for (const code of ERROR_CODES) {
      const row = codes
        .split("\n")
        .find((line) => line.startsWith("|") && new RegExp(`\\b${code}\\b`).test(line));
      expect(row, `a row for ${code}`).toBeDefined();
      expect(row?.split("|")[2]?.trim(), `the status of ${code}`).toBe(String(httpStatusOf(code)));
    }

    const scopes = section("docs/api/auth-keys-and-scopes.md", "Scopes");
    for (const scope of SCOPES) expect(scopes).toContain(`| \`${scope}\` |`);

    const plans = section("docs/api/limits-and-quotas.md", "Plans and limits").replace(/\s+/g, " ");
    for (const [name, value] of Object.entries(TIER_DEFAULTS.standard)) {
      expect(plans).toContain(`\`${name}\` ${number(value)}`);
    }
    expect(plans).toContain(`(pro ${TIER_DEFAULTS.pro.requestsPerMinute})`);

    const fields = section("docs/api/agents.md", "Fields and bounds").replace(/\s+/g, " ");
    expect(fields).toContain(`\`name\`: 1 to ${number(AGENT_BOUNDS.nameMaxLength)} characters`);
    expect(fields).toContain(`at most ${number(AGENT_BOUNDS.arrayMaxItems)} items`);
    expect(fields).toContain(`at most ${number(AGENT_BOUNDS.stringItemMaxLength)} characters`);
    expect(fields).toContain(`\`model\` is 1 to ${number(AGENT_BOUNDS.modelMaxLength)} characters`);
    expect(fields).toContain(`\`text\` is 1 to ${number(MESSAGE_BOUNDS.textMaxLength)} characters`);
    expect(fields).toContain(`\`roomId\` 1 to ${number(MESSAGE_BOUNDS.idMaxLength)}`);
    const { temperature, maxTokens, maxToolSteps } = GENERATION_BOUNDS;
    expect(fields).toContain(`\`temperature\` a number from ${temperature.min} to ${temperature.max}`);
    expect(fields).toContain(
      `\`maxTokens\` an integer from ${maxTokens.min} to ${number(maxTokens.max)} (default ${number(maxTokens.default)})`,
    );
    expect(section("docs/api/plugins-and-tools.md", "Tools in a turn")).toContain(
      `(${maxToolSteps.min} to ${maxToolSteps.max}, default ${maxToolSteps.default};`,
    );
    expect(section("docs/api/messages-and-streams.md", "Fallbacks")).toContain(
      `at most ${FALLBACK_MAX_ITEMS},`,
    );

    const endpoints = section("docs/api/webhooks.md", "Endpoints").replace(/\s+/g, " ");
    expect(endpoints).toContain(`At most ${WEBHOOK_BOUNDS.maxPerAccount} endpoints per account`);
    expect(endpoints).toContain(`\`url\` is at most ${number(WEBHOOK_BOUNDS.urlMaxLength)} characters`);
    expect(endpoints).toContain(`\`description\` at most ${number(WEBHOOK_BOUNDS.descriptionMaxLength)}`);
  });
});
