import { presentStoredMessage } from "@agentry/events";
import type { TurnRecord } from "./store/types.js";

/**
 * A stored message's public JSON text (docs/api/history.md, "Stored messages"), which the stores keep with each turn
 * from the transaction that writes it, and which ListMessages answers for rows stored before they did. The very text
 * a gateway writes when it presents the turn ListMessages carried as a Turn message: each field is taken as that
 * message carries it (its defaults for the unset ones, ISO times through a Date, the total of the tokens), so that a
 * kept text and a presentation of the row agree byte for byte. `turn` is the record as reading its row gives it.
 */
export function storedMessageJson(turn: TurnRecord): string {
  return JSON.stringify(
    presentStoredMessage({
      id: turn.id,
      agentId: turn.agentId,
      conversationId: turn.conversationId,
      userId: turn.userId || null,
      roomId: turn.roomId || null,
      role: turn.role,
      text: turn.text,
      createdAt: new Date(turn.createdAt).toISOString(),
      model: turn.model ?? "",
      modelProvider: turn.provider ?? "",
      finishReason: turn.finishReason || null,
      usage: {
        inputTokens: turn.inputTokens,
        outputTokens: turn.outputTokens,
        totalTokens: turn.inputTokens + turn.outputTokens,
      },
      latencyMs: turn.latencyMs,
      toolCalls: turn.toolCalls.map((call) => ({
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        ok: call.ok,
        output: call.output ?? "",
        error: call.error ?? "",
      })),
      citations: turn.citations,
    }),
  );
}
