export { AppError, asAppError, type FieldIssue } from "./app-error.js";
export { ERROR_CODES, type ErrorCode, httpStatusOf } from "./codes.js";
export { answeredByService, fromConnectError, toConnectError } from "./connect.js";
export { idempotencyKeyInUse, idempotencyKeyReused } from "./idempotency.js";
export { invalid, invalidInput, invalidInputListing, invalidRequest } from "./invalid.js";
