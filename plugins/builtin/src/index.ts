import { calculatorPlugin } from "@agentry/plugin-calculator";
import { httpPlugin } from "@agentry/plugin-http";
import type { Plugin } from "@agentry/plugin-kit";
import { knowledgePlugin } from "@agentry/plugin-knowledge";
import { mcpPlugin } from "@agentry/plugin-mcp";
import { timePlugin } from "@agentry/plugin-time";

/** The plugins every deployable installs; each composition root builds its `Catalogue` from this list. */
export const builtinPlugins: readonly Plugin[] = [
  timePlugin,
  calculatorPlugin,
  knowledgePlugin,
  httpPlugin,
  mcpPlugin,
];
