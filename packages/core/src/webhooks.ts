/**
 * Bounds of a webhook endpoint (docs/api/webhooks.md, "Endpoints"): the webhooks service enforces them, the gateway states
 * them in its validation and its OpenAPI document.
 */
export const WEBHOOK_BOUNDS = {
  /** Endpoints per account; the next create is INSUFFICIENT_QUOTA. */
  maxPerAccount: 20,
  urlMaxLength: 2048,
  descriptionMaxLength: 1000,
} as const;
