import { AppError } from "@agentry/errors";
import type { Router } from "@koa/router";
import type { Context } from "koa";
import type { GatewayContext, GatewayState } from "../context.js";
import { readJsonBody, readRawBody } from "./body.js";

/**
 * Platforms that push updates to the gateway, and what each sends to prove itself: Telegram (webhook mode) its
 * secret token; Slack (Events API) the request's timestamp and signature, checked against the raw body.
 */
const PROOFS: Record<string, (ctx: Context) => string> = {
  telegram: (ctx) => ctx.get("x-telegram-bot-api-secret-token"),
  slack: (ctx) => {
    const timestamp = ctx.get("x-slack-request-timestamp");
    const signature = ctx.get("x-slack-signature");
    return timestamp && signature ? `${timestamp}:${signature}` : "";
  },
};

/**
 * `POST /v1/connectors/{type}/{agentId}`: where a platform pushes an agent's updates. No API key: the platform
 * proves itself (Telegram's `X-Telegram-Bot-Api-Secret-Token`, Slack's signature), which the connectors service
 * checks; anything else is 401. Answered once the update is handled, so the platform retries an update whose answer
 * it never got, and the connector's dedupe keeps that retry from a second reply. Slack's `url_verification`
 * challenge is answered once its signature holds.
 */
export function connectorUpdateRoutes(router: Router<GatewayState>, gateway: GatewayContext): void {
  router.post("/v1/connectors/:type/:agentId", async (ctx) => {
    const { type, agentId } = ctx.params as { type: string; agentId: string };
    const proof = Object.hasOwn(PROOFS, type) ? PROOFS[type]?.(ctx) : undefined;
    if (!proof || !gateway.connectors) {
      throw new AppError("UNAUTHORIZED", "This endpoint takes updates from the agent's platform only.");
    }
    const body = await readJsonBody(ctx);
    // The raw text, byte for byte: Slack's signature covers it, not a re-serialisation.
    const raw = await readRawBody(ctx);
    await gateway.connectors.deliverUpdate(
      { type, agentId, secretToken: proof, body: raw },
      { headers: { "x-request-id": ctx.state.requestId }, timeoutMs: gateway.config.MESSAGE_TIMEOUT_MS },
    );
    const challenge = challengeOf(body);
    ctx.body = type === "slack" && challenge !== undefined ? { challenge } : { success: true };
  });
}

/** The challenge of Slack's `url_verification` request, which proves the Events URL answers for the app. */
function challengeOf(body: unknown): string | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const { type, challenge } = body as { type?: unknown; challenge?: unknown };
  return type === "url_verification" && typeof challenge === "string" ? challenge : undefined;
}
