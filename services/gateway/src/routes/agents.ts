import {
  clientWarnings,
  fallbackChoices,
  generationSettingsIssues,
  isId,
  namesRunPlatform,
  TIER_DEFAULTS,
} from "@agentry/core";
import { AppError, type FieldIssue, invalidInputListing } from "@agentry/errors";
import { AgentView } from "@agentry/proto";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { agentETag, answeredNotModified, ifMatchVersion, pageETag } from "../http/conditional.js";
import { createdUnderKey } from "../http/idempotency.js";
import { sendJsonBytes } from "../http/respond.js";
import {
  createAgentBody,
  listAgentsQuery,
  refuseServiceFields,
  updateAgentBody,
} from "../validation/agents.js";
import {
  type ModelChoice,
  type ModelChoiceSent,
  modelChoiceIssues,
  modelChoiceWarnings,
  needsStoredChoice,
} from "../validation/models.js";
import {
  defineRoute,
  type EmptyResponseDoc,
  type HandlerInput,
  type HeaderParamDoc,
  type Route,
} from "./define.js";
import {
  agentAnswer,
  presentAgent,
  SORT_FIELDS,
  SORT_ORDERS,
  STATUS_VALUES,
  toAgentSpec,
  toUpdateMask,
} from "./present.js";

/**
 * An enabled plugin must be one this deployment installs, and its config must pass the plugin's schema; a disabled
 * one is kept as given (docs/api/plugins-and-tools.md, "Agents' plugins").
 */
function checkPlugins(input: HandlerInput, plugins: readonly unknown[] | undefined): void {
  if (!plugins) return;
  const details = input.gateway.catalogue
    .check(plugins)
    .map((problem) => ({ field: problem.field, issue: problem.message }));
  if (details.length > 0) {
    throw invalidInputListing("request body", details);
  }
}

/** Generation settings (`temperature`, `maxTokens`) out of bounds are refused when written, not when used. */
async function checkGenerationSettings(
  input: HandlerInput,
  settings: Record<string, unknown> | undefined,
): Promise<void> {
  if (!settings) return;
  const details = generationSettingsIssues(settings as JsonObject);
  // Each fallback is held to what the agent's own provider and model are: one this deployment can answer.
  const fallbacks = details.length === 0 ? fallbackChoices(settings) : [];
  const served = fallbacks.length > 0 ? await input.gateway.providers.get() : undefined;
  if (served) {
    fallbacks.forEach((fallback, index) => {
      for (const issue of modelChoiceIssues(served, fallback, { modelProvider: true, model: true })) {
        details.push({ ...issue, field: `settings.fallbacks[${index}].${issue.field}` });
      }
    });
  }
  if (details.length > 0) {
    throw invalidInputListing("request body", details);
  }
}

/**
 * Refuses a provider or model this deployment cannot answer (see `modelChoiceIssues`). On PATCH the half the
 * request does not send is the stored agent's, read only when it matters. The read and the update are not one
 * transaction: two PATCHes racing on the two halves can still pair them wrongly, and the next message then says
 * so with MODEL_ERROR, as every mismatch did before. Unknown providers (the conversation service has not
 * answered yet) leave the check to the message too.
 */
async function checkModelChoice(
  input: HandlerInput,
  choice: ModelChoice,
  sent: ModelChoiceSent,
  storedAgentId?: string,
): Promise<void> {
  if (!sent.modelProvider && !sent.model) return;
  const served = await input.gateway.providers.get();
  if (!served) return;
  let effective = choice;
  if (storedAgentId !== undefined && needsStoredChoice(served, choice, sent)) {
    const { agent } = await input.gateway.agents.getAgent(
      { accountId: input.principal.accountId, id: storedAgentId },
      input.rpc,
    );
    effective = {
      modelProvider: sent.modelProvider ? choice.modelProvider : (agent?.spec?.modelProvider ?? null),
      model: sent.model ? choice.model : (agent?.spec?.model ?? null),
    };
  }
  const details = modelChoiceIssues(served, effective, sent);
  if (details.length > 0) {
    throw invalidInputListing("request body", details);
  }
}

/**
 * An agent whose provider has no configuration here is written all the same, with a warning naming what to set
 * (docs/api/providers.md, "Choosing a provider and model"). While the conversation service has not answered,
 * which providers are configured is unknown, and there is no warning.
 */
export async function providerWarnings(
  input: HandlerInput,
  modelProvider: string | null,
): Promise<FieldIssue[]> {
  if (modelProvider === null) return [];
  const served = await input.gateway.providers.get();
  return served ? modelChoiceWarnings(served, modelProvider) : [];
}

/**
 * The warnings of a write for `clients` items that will not connect (docs/api/connectors.md, "Clients"): a
 * platform no connector runs, and a run platform without its agent secrets. A new agent has no secrets yet; an
 * updated one's are read (their names only) when its `clients` names a run platform, and not otherwise.
 */
export async function clientsWarnings(
  input: HandlerInput,
  clients: unknown,
  agentId?: string,
): Promise<FieldIssue[]> {
  if (agentId === undefined || !namesRunPlatform(clients)) return clientWarnings(clients, new Set());
  try {
    const { secrets } = await input.gateway.plugins.listSecrets(
      { accountId: input.principal.accountId, agentId },
      input.rpc,
    );
    return clientWarnings(clients, new Set(secrets.map((secret) => secret.name)));
  } catch (error) {
    // The write is stored already: its answer must say so. Only the advice about secrets is left out.
    input.gateway.logger.warn(
      { err: error, agentId },
      "could not read the agent's secret names for its warnings",
    );
    return clientWarnings(clients, undefined);
  }
}

/** A malformed id cannot name an agent: answered like a missing one, without a lookup. */
function agentIdParam({ ctx }: HandlerInput): string {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  return id;
}

/** The ETag header of an agent's answers (docs/api/agents.md, "Conditional requests"). */
const AGENT_ETAG = {
  ETag: {
    description:
      'The agent\'s version as a weak validator, `W/"<updatedAt>"`: it changes with every change of the agent. Send it back in `If-None-Match` to read only when changed, in `If-Match` to write only if unchanged.',
    required: true,
    schema: { type: "string", examples: ['W/"2026-11-29T01:40:00.123Z"'] },
  },
};

const PAGE_ETAG = {
  ETag: {
    description:
      "The page's version as a weak validator: it changes when any agent of the page changes, or when the page's agents or counts do. Send it back in `If-None-Match` to read the page only when changed.",
    required: true,
    schema: { type: "string", examples: ['W/"q2Jd0bXb6kQ1m7f3bWl9Yw8rT1c"'] },
  },
};

const ifNoneMatch = (what: string): HeaderParamDoc => ({
  name: "If-None-Match",
  description: `The ETag of ${what} as last read (or \`*\`): while it is still current, the answer is \`304 Not Modified\` without a body.`,
  schema: { type: "string", examples: ['W/"2026-11-29T01:40:00.123Z"'] },
  // The SDKs return the agent or the page; a 304 has neither, so a caller that wants it sends the header itself.
  sdkExclude: true,
});

const notModified = (what: string, headers: EmptyResponseDoc["headers"]): EmptyResponseDoc => ({
  status: 304,
  description: `${what} has not changed since the ETag sent in \`If-None-Match\`; no body.`,
  headers,
});

const ifMatch = (change: string): HeaderParamDoc => ({
  name: "If-Match",
  description: `The agent's ETag as last read (\`W/"<updatedAt>"\`; the quoted value without \`W/\` is taken too): ${change} only if the agent has not changed since, checked atomically with the write; otherwise \`412 PRECONDITION_FAILED\` and nothing changes. \`*\` or no header: unconditional.`,
  schema: { type: "string", examples: ['W/"2026-11-29T01:40:00.123Z"'] },
});

/** The version an `If-Match` names, as the registry's compare-and-set takes it. */
function expectedUpdateTime(input: HandlerInput, id: string) {
  const version = ifMatchVersion(input.ctx, id);
  return version === undefined ? {} : { expectedUpdateTime: timestampFromDate(new Date(version)) };
}

const PAGE_START = Buffer.from('{"success":true,"data":[');
const COMMA = Buffer.from(",");

/** The agent routes of spec section 4.1 to 4.5. */
export const agentRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/agents",
    scope: "agents:write",
    limit: "createPerMinute",
    claimsKeyInCreate: true,
    operationId: "createAgent",
    tag: "Agents",
    summary: "Create an agent",
    description: `Creates an agent in the caller's account. It starts \`active\`. \`name\` is required; omitted arrays are stored as \`[]\`, objects as \`{}\`, \`modelProvider\` and \`model\` as \`null\` (the server's defaults, resolved when a message is sent). Unknown fields, and \`id\`, \`status\`, \`statusReason\`, \`createdAt\`, \`updatedAt\`, \`apiEndpoint\`, are refused. An account holds at most its plan's \`maxAgents\` agents (${TIER_DEFAULTS.standard.maxAgents} by default).\n\n\`modelProvider\` may name any provider this server has a client for (\`openai\`, \`anthropic\`, \`local\`), configured here or not; one with no configuration is written all the same, and \`warnings\` names the variable to set (\`OPENAI_API_KEY\`, \`ANTHROPIC_API_KEY\`); until then its messages fail with \`502 MODEL_ERROR\`.\n\n\`clients\` may name any platform; an item that will not connect is written all the same, with a warning for \`clients[<i>]\`: a platform no connector runs (any but \`telegram\`, \`discord\` and \`slack\`) is kept and listed as \`inert\`, and a run platform whose agent secrets are not set (\`TELEGRAM_BOT_TOKEN\`; \`DISCORD_BOT_TOKEN\`; \`SLACK_BOT_TOKEN\` and \`SLACK_SIGNING_SECRET\`) does not connect until each named secret is set with \`PUT /v1/agents/{agentId}/secrets/{name}\`. A new agent holds no secrets yet, so naming a run platform on create always warns of them.`,
    body: { schema: createAgentBody, component: "CreateAgentRequest" },
    success: {
      status: 201,
      schema: "AgentWriteResponse",
      description: "The agent created, and the warnings.",
    },
    errors: ["INVALID_REQUEST", "INSUFFICIENT_QUOTA", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const body = await input.body((raw) => refuseServiceFields(raw, []));
      checkPlugins(input, body.plugins);
      await checkGenerationSettings(input, body.settings);
      await checkModelChoice(
        input,
        { modelProvider: body.modelProvider ?? null, model: body.model ?? null },
        { modelProvider: true, model: true },
      );
      const warnings = [
        ...(await providerWarnings(input, body.modelProvider ?? null)),
        ...(await clientsWarnings(input, body.clients)),
      ];
      const { agent } = createdUnderKey(
        ctx,
        await gateway.agents.createAgent(
          {
            accountId: principal.accountId,
            spec: toAgentSpec(body),
            idempotency: ctx.state.idempotency?.create,
          },
          rpc,
        ),
      );
      ctx.status = 201;
      ctx.body = { success: true, data: presentAgent(agent!, gateway.config.PUBLIC_BASE_URL), warnings };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents",
    scope: "agents:read",
    limit: "listPerMinute",
    operationId: "listAgents",
    tag: "Agents",
    summary: "List agents",
    description:
      "Lists the caller's agents a page at a time, newest first unless `sortBy` and `order` say otherwise. Out-of-range or unknown query parameters are refused, never clamped; a parameter given twice is refused.",
    query: listAgentsQuery,
    pagination: "page",
    requestHeaders: [ifNoneMatch("the page")],
    success: {
      status: 200,
      schema: "AgentListResponse",
      description: "One page of agents.",
      headers: PAGE_ETAG,
    },
    emptyResponses: [notModified("The page", PAGE_ETAG)],
    errors: ["INVALID_REQUEST"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const query = input.query();
      const response = await gateway.agents.listAgents(
        {
          accountId: principal.accountId,
          page: query.page,
          pageSize: query.limit,
          ...(query.status ? { status: STATUS_VALUES[query.status] } : {}),
          sortBy: SORT_FIELDS[query.sortBy],
          order: SORT_ORDERS[query.order],
          view: AgentView.PUBLIC,
        },
        rpc,
      );
      const total = response.totalSize;
      const totalPages = Math.ceil(total / query.limit);
      const agents = response.agents.map((agent) => ({
        id: agent.id,
        answer: agentAnswer(agent, gateway.config.PUBLIC_BASE_URL),
      }));
      const versions = agents.map(({ id, answer }) => ({ id, updatedAt: answer.updatedAt }));
      if (answeredNotModified(ctx, pageETag(versions, [query.page, query.limit, total]))) return;
      // The page is assembled from the agents' encoded texts, as `JSON.stringify` would write the same envelope.
      const pagination = JSON.stringify({
        page: query.page,
        limit: query.limit,
        total,
        totalPages,
        hasMore: query.page < totalPages,
      });
      const parts: Buffer[] = [PAGE_START];
      agents.forEach(({ answer }, i) => {
        if (i > 0) parts.push(COMMA);
        parts.push(answer.json);
      });
      parts.push(Buffer.from(`],"pagination":${pagination}}`));
      sendJsonBytes(ctx, Buffer.concat(parts));
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId",
    scope: "agents:read",
    limit: "getPerMinute",
    operationId: "getAgent",
    tag: "Agents",
    summary: "Get an agent",
    description:
      'Returns the full agent record, with its version in `ETag` (`W/"<updatedAt>"`). With `If-None-Match` naming the current version, the answer is `304 Not Modified` without a body.',
    requestHeaders: [ifNoneMatch("the agent")],
    success: { status: 200, schema: "AgentResponse", description: "The agent.", headers: AGENT_ETAG },
    emptyResponses: [notModified("The agent", AGENT_ETAG)],
    errors: ["AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = agentIdParam(input);
      const { agent } = await gateway.agents.getAgent(
        { accountId: principal.accountId, id, view: AgentView.PUBLIC },
        rpc,
      );
      const answer = agentAnswer(agent!, gateway.config.PUBLIC_BASE_URL);
      if (answeredNotModified(ctx, answer.etag)) return;
      sendJsonBytes(ctx, answer.body);
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/v1/agents/:agentId",
    scope: "agents:write",
    limit: "updatePerMinute",
    operationId: "updateAgent",
    tag: "Agents",
    summary: "Update an agent",
    description:
      "Changes only the fields supplied; the others stay as they are. `status` may be set to `active` or `inactive` (`inactive` keeps all data but refuses messages). `null` resets `modelProvider` or `model` to the server's default. A PATCH that supplies `modelProvider`, `model` or `settings` takes an agent out of `error` (back to `active`), as does one that sets `status`.\n\n`warnings` are those of the agent as updated, whether or not the PATCH sends the fields: a `modelProvider` with no configuration here, and each `clients[<i>]` that will not connect, a platform no connector runs (any but `telegram`, `discord` and `slack`: kept, listed as `inert`) or a run platform the agent does not hold the secrets of, naming each to set with `PUT /v1/agents/{agentId}/secrets/{name}`.\n\nWith `If-Match` (the agent's `ETag`), the update happens only if no other change came since that version; otherwise `412 PRECONDITION_FAILED`: read the agent again and decide. The answer's `ETag` is the updated agent's.",
    body: { schema: updateAgentBody, component: "UpdateAgentRequest" },
    requestHeaders: [ifMatch("the update happens")],
    success: {
      status: 200,
      schema: "AgentWriteResponse",
      description: "The agent as updated, and the warnings.",
      headers: AGENT_ETAG,
    },
    errors: [
      "INVALID_REQUEST",
      "AGENT_NOT_FOUND",
      "PRECONDITION_FAILED",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = agentIdParam(input);
      const expected = expectedUpdateTime(input, id);
      const { status, ...fields } = await input.body((raw) => refuseServiceFields(raw, ["status"]));
      checkPlugins(input, fields.plugins);
      await checkGenerationSettings(input, fields.settings);
      await checkModelChoice(
        input,
        { modelProvider: fields.modelProvider ?? null, model: fields.model ?? null },
        { modelProvider: fields.modelProvider !== undefined, model: fields.model !== undefined },
        id,
      );
      const { agent } = await gateway.agents.updateAgent(
        {
          accountId: principal.accountId,
          id,
          spec: toAgentSpec(fields),
          updateMask: toUpdateMask(fields),
          ...(status ? { status: STATUS_VALUES[status] } : {}),
          ...expected,
        },
        rpc,
      );
      const data = presentAgent(agent!, gateway.config.PUBLIC_BASE_URL);
      ctx.set("ETag", agentETag(data.updatedAt));
      const warnings = [
        ...(await providerWarnings(input, agent?.spec?.modelProvider || null)),
        ...(await clientsWarnings(input, data.clients, id)),
      ];
      ctx.body = { success: true, data, warnings };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/agents/:agentId",
    scope: "agents:delete",
    limit: "deletePerMinute",
    operationId: "deleteAgent",
    tag: "Agents",
    summary: "Delete an agent",
    description:
      "Deletes the agent permanently: its configuration, conversation history, usage metrics and logs are removed and its platform integrations disconnected. Irreversible; nothing of it can be read afterwards. Deleting several agents takes one request each.\n\nWith `If-Match` (the agent's `ETag`), the agent is deleted only if it has not changed since that version; otherwise `412 PRECONDITION_FAILED` and it stays.",
    requestHeaders: [ifMatch("the delete happens")],
    success: { status: 200, schema: "AgentDeletedResponse", description: "The agent was deleted." },
    errors: ["AGENT_NOT_FOUND", "PRECONDITION_FAILED"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = agentIdParam(input);
      await gateway.agents.deleteAgent(
        { accountId: principal.accountId, id, ...expectedUpdateTime(input, id) },
        rpc,
      );
      ctx.body = { success: true, data: { id, deleted: true } };
    },
  }),
];
