import type { LimitName, Scope } from "@agentry/core";
import type { CallOptions } from "@connectrpc/connect";
import type { ParameterizedContext } from "koa";
import type { GatewayContext, GatewayState, Principal } from "../context.js";

/** What a REST handler gets: the Koa context, the gateway's dependencies, the caller, RPC call options. */
export interface HandlerInput {
  ctx: ParameterizedContext<GatewayState> & { params: Record<string, string> };
  gateway: GatewayContext;
  principal: Principal;
  rpc: CallOptions;
}

export interface Route {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Koa router path, relative to the host (e.g. `/v1/agents/:agentId`). */
  path: string;
  /** The scope the caller's key must hold; null: any valid key (reads of what the deployment serves). */
  scope: Scope | null;
  /** The endpoint's own rate-limit bucket (docs/api/limits-and-quotas.md, "Buckets"); the tier bucket always applies. */
  limit?: LimitName;
  /** Whether requests hold one of the agent's concurrency slots while they run. */
  concurrency?: boolean;
  handle(input: HandlerInput): Promise<void>;
  /**
   * Whether the handler claims the request's Idempotency-Key in the registry's create transaction (CreateAgent or
   * CreateApiKey with `idempotency`, answered through `createdUnderKey`) rather than around the handler: one
   * transaction for the key and what it creates, and no second one to keep the response.
   */
  claimsKeyInCreate?: boolean;
}
