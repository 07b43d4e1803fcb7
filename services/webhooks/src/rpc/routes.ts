import { WebhookService } from "@agentry/proto";
import type { ConnectRouter } from "@connectrpc/connect";
import type { WebhooksContext } from "./context.js";
import { webhookService } from "./webhook-service.js";

/** Every RPC the webhooks service serves. */
export function webhooksRoutes(ctx: WebhooksContext): (router: ConnectRouter) => void {
  return (router) => {
    router.service(WebhookService, webhookService(ctx));
  };
}
