import type { Agent, Pagination } from "@agentry/sdk";
import { api } from "./api";
import { openApiDocument } from "./schema-check";

/** Every agent of the account, for pickers (pages of 100, at most 1,000 agents). */
export async function allAgents(): Promise<Agent[]> {
  const agents: Agent[] = [];
  for (let page = 1; page <= 10; page++) {
    const { data, pagination } = await api<Agent[], Pagination>("GET", "/v1/agents", {
      query: { page, limit: 100, sortBy: "name", order: "asc" },
    });
    agents.push(...data);
    if (!pagination?.hasMore) break;
  }
  return agents;
}

export interface ProviderChoices {
  providers: string[];
  /** Models a provider is limited to, where it is. */
  models: Record<string, string[]>;
}

function enumOf(schema: unknown): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  const record = schema as Record<string, unknown>;
  if (Array.isArray(record.enum)) return record.enum.filter((v): v is string => typeof v === "string");
  for (const key of ["anyOf", "oneOf"]) {
    const options = record[key];
    if (Array.isArray(options)) return options.flatMap(enumOf);
  }
  return [];
}

/** The names a `^…(?:a|b)…$` pattern of the document accepts. */
export function namesOfPattern(pattern: string): string[] {
  const inner = /\(\?:(.*)\)\[[^\]]*\]\*\$$/.exec(pattern)?.[1];
  if (!inner) return [];
  return inner.split(/(?<!\\)\|/).map((name) => name.replace(/\\(.)/g, "$1"));
}

/**
 * The providers an agent may name (every one the server has a client for; one not configured here is taken with a
 * warning) and the models of those that serve only some, read from the OpenAPI document it publishes at
 * `/v1/openapi.json`: its agent request schema lists them.
 */
export async function providerChoices(): Promise<ProviderChoices> {
  const doc = await openApiDocument();
  if (!doc) return { providers: [], models: {} };
  const schema = doc.components?.schemas?.CreateAgentRequest;
  const providers = enumOf(schema?.properties?.modelProvider);
  const models: Record<string, string[]> = {};
  for (const rule of (schema?.allOf ?? []) as {
    if?: { properties?: { modelProvider?: { const?: string } } };
    then?: { properties?: { model?: { pattern?: string } } };
  }[]) {
    const name = rule.if?.properties?.modelProvider?.const;
    const pattern = rule.then?.properties?.model?.pattern;
    if (name && pattern) models[name] = namesOfPattern(pattern);
  }
  return { providers, models };
}
