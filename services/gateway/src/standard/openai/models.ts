import { type Agent, AgentStatus, AgentView } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { RequestContext } from "../../routes/define.js";
import { addressedAgent } from "./chat.js";

/** The registry's largest page. */
const PAGE_SIZE = 100;

/** An agent as OpenAI's `model` object: what `model` in a chat completion names. */
function modelOf(agent: Agent) {
  const created = agent.createTime ? timestampDate(agent.createTime) : new Date(0);
  return {
    id: agent.id,
    object: "model",
    created: Math.floor(created.getTime() / 1000),
    owned_by: agent.accountId,
  };
}

/** `GET /v1/models`: the account's active agents, every one (OpenAI's list has no pages). */
export async function listModels(input: RequestContext): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const data: ReturnType<typeof modelOf>[] = [];
  for (let page = 1; ; page++) {
    const { agents, totalSize } = await gateway.agents.listAgents(
      // The public view holds all a model's entry shows, and costs the registry least.
      {
        accountId: principal.accountId,
        page,
        pageSize: PAGE_SIZE,
        status: AgentStatus.ACTIVE,
        view: AgentView.PUBLIC,
      },
      rpc,
    );
    data.push(...agents.map(modelOf));
    if (agents.length < PAGE_SIZE || page * PAGE_SIZE >= totalSize) break;
  }
  ctx.body = { object: "list", data };
}

/** `GET /v1/models/{model}`: one agent of the account as a model; 404 when there is none by that id. */
export async function getModel(input: RequestContext): Promise<void> {
  input.ctx.body = modelOf(await addressedAgent(input, input.ctx.params.model ?? ""));
}
