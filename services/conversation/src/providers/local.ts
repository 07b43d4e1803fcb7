import { AppError } from "@agentry/errors";
import type { ModelProvider } from "./types.js";

const UNAVAILABLE =
  "The local provider is not available in this build. Set the agent's modelProvider to openai or anthropic.";

/**
 * The slot of the `local` provider (an in-process model). `local` is a valid provider name, so agents may name
 * it; until a build ships the in-process model, every call fails with MODEL_ERROR saying so.
 */
export function createLocalProvider(): ModelProvider {
  return {
    name: "local",
    defaultModel: "",
    complete: async () => {
      throw new AppError("MODEL_ERROR", UNAVAILABLE);
    },
    stream: async () => {
      throw new AppError("MODEL_ERROR", UNAVAILABLE);
    },
  };
}
