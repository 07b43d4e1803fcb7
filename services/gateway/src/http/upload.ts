import { createHash } from "node:crypto";
import { DOCUMENT_BOUNDS } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { Context } from "koa";
import getRawBody from "raw-body";

/** What a multipart form's parts, the file's headers and boundaries add to the file itself, at most. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** A file sent as `multipart/form-data` (docs/api/documents.md): its bytes, media type and name, and the form's text fields. */
export interface Upload {
  content: Uint8Array;
  contentType: string;
  fileName: string;
  fields: Record<string, string>;
}

function tooLarge(): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `A document may be at most ${DOCUMENT_BOUNDS.maxBytes / (1024 * 1024)} MiB; split the file and upload the parts.`,
  );
}

/**
 * Reads a `multipart/form-data` request with one file part, `file`: 413 beyond the document limit (checked against
 * `Content-Length` first, then while reading, then on the file itself), 400 for a form without a file. The form is
 * parsed by the runtime's own Fetch implementation.
 */
export function readUpload(ctx: Context): Promise<Upload> {
  // Read once: the Idempotency-Key check reads it before the handler does.
  const holder = ctx as Context & { [UPLOAD]?: Promise<Upload> };
  holder[UPLOAD] ??= parseUpload(ctx);
  return holder[UPLOAD];
}

const UPLOAD = Symbol("upload");

async function parseUpload(ctx: Context): Promise<Upload> {
  const limit = DOCUMENT_BOUNDS.maxBytes + FORM_OVERHEAD_BYTES;
  const declared = Number(ctx.get("content-length") || Number.NaN);
  if (declared > limit) throw tooLarge();
  let body: Buffer;
  try {
    body = await getRawBody(ctx.req, { limit });
  } catch (error) {
    if ((error as { type?: string }).type === "entity.too.large") throw tooLarge();
    throw new AppError("INVALID_REQUEST", "The request body could not be read.", { cause: error });
  }
  let form: FormData;
  try {
    form = await new Request("http://upload.invalid/", {
      method: "POST",
      headers: { "content-type": ctx.get("content-type") },
      body,
    }).formData();
  } catch (error) {
    throw new AppError("INVALID_REQUEST", "The request body is not a valid multipart/form-data form.", {
      cause: error,
    });
  }
  const file = form.get("file");
  if (!(file instanceof Blob)) {
    throw new AppError("INVALID_REQUEST", "The form has no file: send it as the part named 'file'.", {
      details: [{ field: "file", issue: "is required, as a file part" }],
    });
  }
  if (file.size > DOCUMENT_BOUNDS.maxBytes) throw tooLarge();
  const fields: Record<string, string> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === "string") fields[name] = value;
  }
  return {
    content: new Uint8Array(await file.arrayBuffer()),
    contentType: file.type,
    fileName: "name" in file && typeof file.name === "string" ? file.name : "",
    fields,
  };
}

/**
 * What identifies an upload for its Idempotency-Key: the file's bytes, media type and name, and the form's text
 * fields, but not the form's boundary, which a client may draw anew for each attempt of the same upload.
 */
export async function uploadIdentity(ctx: Context): Promise<string> {
  const upload = await readUpload(ctx);
  const hash = createHash("sha256").update(upload.content);
  const fields = Object.entries(upload.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([hash.digest("hex"), upload.contentType, upload.fileName, fields]);
}

/** The media type of an uploaded file sent without a useful one, from its name's extension; "" when unknown. */
export function typeOfFileName(name: string): string {
  const extension = name.toLowerCase().split(".").at(-1) ?? "";
  const byExtension: Record<string, string> = {
    txt: "text/plain",
    text: "text/plain",
    md: "text/markdown",
    markdown: "text/markdown",
    html: "text/html",
    htm: "text/html",
    pdf: "application/pdf",
  };
  return byExtension[extension] ?? "";
}
