import { AppError } from "@agentry/errors";
import type { Router } from "@koa/router";
import type { GatewayContext, GatewayState } from "../context.js";
import { readJsonBody } from "./body.js";

/** Platforms that push updates to the gateway (Telegram in webhook mode). */
const PUSHING_PLATFORMS = new Set(["telegram"]);

/**
 * `POST /v1/connectors/{type}/{agentId}`: where a platform pushes an agent's updates. No API key: the platform
 * proves itself with the secret the connector registered (Telegram's `X-Telegram-Bot-Api-Secret-Token`), which
 * the connectors service checks; anything else is 401. Answered once the update is handled, so the platform
 * retries an update whose answer it never got, and the connector's dedupe keeps that retry from a second reply.
 */
export function connectorUpdateRoutes(router: Router<GatewayState>, gateway: GatewayContext): void {
  router.post("/v1/connectors/:type/:agentId", async (ctx) => {
    const { type, agentId } = ctx.params as { type: string; agentId: string };
    const secretToken = ctx.get("x-telegram-bot-api-secret-token");
    if (!PUSHING_PLATFORMS.has(type) || !gateway.connectors || secretToken === "") {
      throw new AppError("UNAUTHORIZED", "This endpoint takes updates from the agent's platform only.");
    }
    const body = await readJsonBody(ctx);
    await gateway.connectors.deliverUpdate(
      { type, agentId, secretToken, body: JSON.stringify(body) },
      { headers: { "x-request-id": ctx.state.requestId }, timeoutMs: gateway.config.MESSAGE_TIMEOUT_MS },
    );
    ctx.body = { success: true };
  });
}
