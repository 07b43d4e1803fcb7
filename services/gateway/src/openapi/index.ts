// The public contract as the gateway documents it, for the checks that compare it with what is served.
export { BODY_LIMIT_BYTES } from "../http/body.js";
export { buildOpenApiDocument, type OpenApiDocument, openApiPath } from "./document.js";
export {
  COMMITTED_DOCUMENT,
  COMMITTED_DOCUMENT_URL,
  committedDocument,
  REGENERATE_COMMAND,
} from "./write.js";
