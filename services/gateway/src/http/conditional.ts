import { createHash } from "node:crypto";
import { AppError } from "@agentry/errors";
import type { ParameterizedContext } from "koa";
import type { GatewayState } from "../context.js";

/*
 * Conditional requests on agents (docs/api/agents.md, "Conditional requests"). An agent's version is its
 * `updatedAt`, which the registry makes unique to each change; its ETag is that version as a weak validator. A list
 * page's ETag is a digest of what it answers. `If-None-Match` on a read answers 304 while the tag still matches;
 * `If-Match` on a PATCH or DELETE is handed to the registry, which compares it in the write's own transaction.
 */

type Context = ParameterizedContext<GatewayState>;

/** The form of an agent's version: `updatedAt`, ISO 8601 with milliseconds, UTC. */
const VERSION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The ETag of an agent as it is now. */
export function agentETag(updatedAt: string): string {
  return `W/"${updatedAt}"`;
}

/**
 * The ETag of a list page: a digest of each item's id and version in order, and of the counts the page answers,
 * so that a change to any of them (an agent created, changed, deleted or moved to another page) changes it.
 */
export function pageETag(
  items: readonly { id: string; updatedAt: string }[],
  counts: readonly number[],
): string {
  let digested = "";
  for (const item of items) digested += `${item.id}@${item.updatedAt}\n`;
  const hash = createHash("sha256").update(digested + counts.join(","));
  return `W/"${hash.digest("base64url").slice(0, 27)}"`;
}

/** The tags a conditional header lists, each without its weakness prefix; `*` alone is any. */
function listedTags(header: string): "*" | string[] {
  if (header.trim() === "*") return "*";
  return header
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .filter((tag) => tag !== "")
    .map((tag) => (tag.startsWith('"') && tag.endsWith('"') && tag.length >= 2 ? tag.slice(1, -1) : tag));
}

/**
 * Answers a read 304 Not Modified, with its ETag and no body, when `If-None-Match` lists the current tag (weak
 * comparison, as RFC 9110 has for this header) or is `*`; otherwise sets the ETag for the full answer. True when
 * answered.
 */
export function answeredNotModified(ctx: Context, etag: string): boolean {
  // The response's and request's headers directly: Koa's `set` and `get` add a lookup per header.
  ctx.res.setHeader("ETag", etag);
  const header = ctx.req.headers["if-none-match"] ?? "";
  if (header === "") return false;
  const tags = listedTags(header);
  const current = listedTags(etag);
  if (tags !== "*" && !tags.some((tag) => current.includes(tag))) return false;
  ctx.status = 304;
  ctx.body = null;
  return true;
}

/**
 * The version a write's `If-Match` names, for the registry's compare-and-set; undefined without one or with `*`
 * (any current version: a missing agent is still 404). The tag is compared by its value, with or without `W/`,
 * since the agent's tags are weak and a write is what they are for. A tag that is no version of an agent can
 * match none: 412 at once. Several tags: 400, as the registry compares one.
 */
export function ifMatchVersion(ctx: Context, agentId: string): string | undefined {
  const header = ctx.get("if-match");
  if (header === "") return undefined;
  const tags = listedTags(header);
  if (tags === "*") return undefined;
  if (tags.length !== 1) {
    throw new AppError(
      "INVALID_REQUEST",
      `If-Match must name one ETag, the agent's (the ETag header of GET /v1/agents/${agentId}), or "*"; it named ${tags.length}.`,
    );
  }
  const version = tags[0]!;
  if (!VERSION.test(version) || Number.isNaN(Date.parse(version))) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `If-Match ${JSON.stringify(header)} is not a version of agent ${agentId}. Read it again with GET /v1/agents/${agentId} and send its ETag.`,
    );
  }
  return version;
}
