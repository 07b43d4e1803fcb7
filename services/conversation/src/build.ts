import type { Logger } from "@agentry/logging";
import { type Metrics, traceMethods } from "@agentry/observability";
import type { ConnectRouter } from "@connectrpc/connect";
import { DEFAULT_CONTEXT_TOKEN_BUDGET } from "./config.js";
import type { ConversationContext } from "./context.js";
import { observeProviders } from "./providers/observed.js";
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  ProviderSet,
  type ProvidersConfig,
} from "./providers/resolve.js";
import { conversationRoutes } from "./routes.js";
import { openConversationStore } from "./store/open.js";
import type { ConversationStore } from "./store/types.js";

export interface BuildConversationOptions {
  /** Directory of the embedded database (`<dataDir>/conversation.db`). */
  dataDir: string;
  /** A Postgres URL (DATABASE_URL) for the store; without it, SQLite in `dataDir`. */
  databaseUrl?: string;
  logger: Logger;
  providers: ProvidersConfig;
  /** CONTEXT_TOKEN_BUDGET; 3000 when unset. */
  contextTokenBudget?: number;
  /** A store to use instead of the embedded one; it is closed with the service. */
  store?: ConversationStore;
  /** Where provider calls, tokens and errors are counted; nothing is counted without it. */
  metrics?: Metrics;
}

export interface Conversation {
  /** The ConversationService RPCs, for `connectNodeAdapter({ routes })` or `createRouterTransport(routes)`. */
  routes: (router: ConnectRouter) => void;
  store: ConversationStore;
  /** Whether the store answers: what readiness reports. */
  ready(): Promise<boolean>;
  /** Closes the store and frees the local model. Stop serving first. */
  close(): Promise<void>;
}

/** The composition root: builds the store, the providers and the routes once, as one context. */
export async function buildConversation(options: BuildConversationOptions): Promise<Conversation> {
  const logger = options.logger;
  const store =
    options.store ??
    (await openConversationStore({ dataDir: options.dataDir, databaseUrl: options.databaseUrl, logger }));
  const ctx: ConversationContext = {
    store: traceMethods(store, "conversation.store"),
    providers: new ProviderSet(options.providers, logger, options.dataDir),
    logger,
    limits: {
      contextTokenBudget: options.contextTokenBudget ?? DEFAULT_CONTEXT_TOKEN_BUDGET,
      timeoutMs: options.providers.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS,
      firstTokenTimeoutMs: options.providers.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
    },
  };
  observeProviders(ctx.providers, options.metrics);
  if (ctx.providers.localByDefault) {
    logger.info(
      { model: ctx.providers.local?.defaultModel },
      "no hosted model provider is configured: agents without modelProvider use the local model " +
        "(DEFAULT_MODEL_PROVIDER with OPENAI_API_KEY/OPENAI_BASE_URL or ANTHROPIC_API_KEY chooses another)",
    );
  }
  if (options.providers.local?.preload && ctx.providers.local) {
    // A model that cannot be had is reported here and again, as MODEL_ERROR, by each message that needs it.
    await ctx.providers.local.warmUp().catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, "local model not loaded");
    });
  }
  return {
    routes: conversationRoutes(ctx),
    store,
    ready: () =>
      store.ping().then(
        () => true,
        () => false,
      ),
    async close() {
      await store.close();
      await ctx.providers.close();
    },
  };
}
