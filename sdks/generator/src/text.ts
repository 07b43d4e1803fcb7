/** Casing and comment helpers shared by the emitters. */

/** The words of an identifier: `apiKeys` → `["api", "keys"]`, `X-RateLimit-Limit` → `["x", "rate", "limit", "limit"]`. */
export function words(identifier: string): string[] {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== "")
    .map((word) => word.toLowerCase());
}

/** `agentId` → `agent_id`. */
export function snakeCase(identifier: string): string {
  return words(identifier).join("_");
}

/** `agent_id` → `agentId`. */
export function camelCase(identifier: string): string {
  const [first = "", ...rest] = words(identifier);
  return first + rest.map(capitalize).join("");
}

/** `api-keys` → `ApiKeys`. */
export function pascalCase(identifier: string): string {
  return words(identifier).map(capitalize).join("");
}

/** `rateLimit` → `RATE_LIMIT`. */
export function constantCase(identifier: string): string {
  return words(identifier).join("_").toUpperCase();
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Wraps prose to `width` columns, keeping paragraphs (blank lines) and lines that start Markdown lists or tables
 * as they are. Returns lines without the comment prefix, for the emitter to add its own.
 */
export function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.trim().split(/\n\s*\n/)) {
    if (out.length > 0) out.push("");
    const lines = paragraph.split("\n");
    if (lines.some((line) => /^\s*([-*|]|\d+\.)\s/.test(line) || line.startsWith("|"))) {
      out.push(...lines.map((line) => line.trimEnd()));
      continue;
    }
    let current = "";
    for (const word of paragraph.split(/\s+/).filter((w) => w !== "")) {
      if (current !== "" && current.length + 1 + word.length > width) {
        out.push(current);
        current = word;
      } else {
        current = current === "" ? word : `${current} ${word}`;
      }
    }
    if (current !== "") out.push(current);
  }
  return out;
}
