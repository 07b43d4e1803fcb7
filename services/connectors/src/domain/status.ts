/** A client's state as `GET /v1/agents/{agentId}/clients` shows it. */
export type ClientState = "connected" | "connecting" | "stopped" | "failed" | "inert";

export interface ClientError {
  code: string;
  message: string;
  at: string;
}

export interface ClientStatus {
  type: string;
  state: ClientState;
  connectedAt: string | null;
  lastEventAt: string | null;
  lastError: ClientError | null;
}

/** The code an agent's statusReason carries when a platform rejects its token. */
export const CLIENT_AUTH_FAILED = "CLIENT_AUTH_FAILED";

/** Sent in place of a reply when a budget of the agent or its account is spent (the model was not called). */
export const BUDGET_SPENT =
  "Sorry, I can't answer right now: this assistant's usage budget is spent. Please try again later.";

/** The one message sent in place of a reply when a turn fails; the failure itself is not retried. */
export const APOLOGY = "Sorry, I couldn't answer that just now. Please try again in a moment.";
