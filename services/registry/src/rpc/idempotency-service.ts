import { AppError, invalid } from "@agentry/errors";
import {
  type CreateIdempotency,
  IdempotencyOutcome,
  type IdempotencyService,
  type StoredResponseSchema,
} from "@agentry/proto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CreateUnderKey, IdempotencyBegin, StoredIdempotentResponse } from "../store/types.js";
import type { RegistryContext } from "./context.js";
import { checkSha256 } from "./convert.js";

/** The longest claim: longer than any request the gateway runs, so a lost one frees its key within the hour. */
const MAX_LEASE_MS = 60 * 60 * 1000;

const OUTCOMES: Record<IdempotencyBegin["outcome"], IdempotencyOutcome> = {
  started: IdempotencyOutcome.STARTED,
  stored: IdempotencyOutcome.STORED,
  in_use: IdempotencyOutcome.IN_USE,
  reused: IdempotencyOutcome.REUSED,
};

/** A create's Idempotency-Key (CreateIdempotency), claimed in the create's transaction, checked. */
export function createClaim(claim: CreateIdempotency): CreateUnderKey {
  if (claim.fingerprint === "") throw invalid("idempotency.fingerprint", "is required");
  return { keyHash: checkSha256("idempotency.key_hash", claim.keyHash), fingerprint: claim.fingerprint };
}

const SEALING_KEY_BYTES = 32;

/** The key a create's secret is kept sealed with under its Idempotency-Key (CreateIdempotency.sealing_key). */
export function createSealingKey(claim: CreateIdempotency): Buffer {
  if (claim.sealingKey.length !== SEALING_KEY_BYTES) {
    throw invalid("idempotency.sealing_key", `must be ${SEALING_KEY_BYTES} bytes`);
  }
  return Buffer.from(claim.sealingKey);
}

export function storedResponseToProto({
  status,
  sealed,
  resourceId,
}: StoredIdempotentResponse): MessageInitShape<typeof StoredResponseSchema> {
  return { status, sealed: sealed ?? new Uint8Array(), resourceId: resourceId ?? "" };
}

/** The registry's IdempotencyService: Idempotency-Key records, kept by the store. */
export function idempotencyService({ store }: RegistryContext): ServiceImpl<typeof IdempotencyService> {
  return {
    async beginRequest(request) {
      const leaseMs = Number(request.leaseMs);
      if (!(leaseMs > 0 && leaseMs <= MAX_LEASE_MS)) {
        throw invalid("lease_ms", `must be 1 to ${MAX_LEASE_MS}`);
      }
      if (request.fingerprint === "") throw invalid("fingerprint", "is required");
      const begun = await store.beginIdempotentRequest({
        accountId: request.accountId,
        keyHash: checkSha256("key_hash", request.keyHash),
        fingerprint: request.fingerprint,
        leaseMs,
      });
      if (begun.outcome !== "stored") return { outcome: OUTCOMES[begun.outcome] };
      return { outcome: IdempotencyOutcome.STORED, response: storedResponseToProto(begun.response) };
    },

    async completeRequest(request) {
      if (!(request.status >= 100 && request.status <= 599)) {
        throw new AppError("INVALID_REQUEST", "status must be an HTTP status.");
      }
      await store.completeIdempotentRequest(request.accountId, checkSha256("key_hash", request.keyHash), {
        status: request.status,
        sealed: request.sealed,
      });
      return {};
    },

    async releaseRequest(request) {
      await store.releaseIdempotentRequest(request.accountId, checkSha256("key_hash", request.keyHash));
      return {};
    },
  };
}
