import {
  AccountService,
  AgentService,
  BudgetService,
  IdempotencyService,
  PluginService,
} from "@agentry/proto";
import type { ConnectRouter } from "@connectrpc/connect";
import { accountService } from "./account-service.js";
import { agentService } from "./agent-service.js";
import { budgetService } from "./budget-service.js";
import type { RegistryContext } from "./context.js";
import { idempotencyService } from "./idempotency-service.js";
import { pluginService } from "./plugin-service.js";

/** Every RPC the registry serves. */
export function registryRoutes(ctx: RegistryContext): (router: ConnectRouter) => void {
  return (router) => {
    router.service(AgentService, agentService(ctx));
    router.service(AccountService, accountService(ctx));
    router.service(IdempotencyService, idempotencyService(ctx));
    router.service(PluginService, pluginService(ctx));
    router.service(BudgetService, budgetService(ctx));
  };
}
