import type { RequestOptions, Transport } from "../core.js";
import { type CursorEnvelope, type CursorPagePromise, fetchCursorPage, PagePromise } from "../pagination.js";
import type { AuditEvent, AuditEventExportParams, AuditEventListParams } from "../types.js";
import { UserExport } from "../user-export.js";

/** The query string of the filters given. */
function filters(params: AuditEventExportParams): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) if (typeof value === "string") query[name] = value;
  return query;
}

/**
 * The account's audit log: who changed what, when and from where, through any route, the console or the admin
 * CLI (scope `audit:read`).
 */
export class AuditEvents {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Lists the events, newest first, a page at a time (default 20). Await the result for one page, or iterate it
   * for every event.
   *
   * @throws {BadRequestError} a bad filter (the error names it)
   * @throws {PermissionDeniedError} without `audit:read`
   */
  list(params: AuditEventListParams = {}, options?: RequestOptions): CursorPagePromise<AuditEvent> {
    return new PagePromise(() =>
      fetchCursorPage(
        params,
        async (query) =>
          (await this.#transport.json(
            { method: "GET", path: "/audit-events", query: { ...query } },
            options,
          )) as CursorEnvelope<AuditEvent>,
      ),
    );
  }

  /**
   * Every event matching the filters, oldest first, read as the service streams it (NDJSON). The request is sent
   * when the loop starts; an export that breaks after it started throws `APIConnectionError` and is not retried.
   *
   * ```ts
   * for await (const event of client.auditEvents.export({ since: "2026-11-01T00:00:00Z" })) console.log(event.action);
   * ```
   */
  export(params: AuditEventExportParams = {}, options: RequestOptions = {}): UserExport<AuditEvent> {
    return new UserExport<AuditEvent>(
      (signal) =>
        this.#transport.stream(
          { method: "GET", path: "/audit-events/export", query: filters(params) },
          { ...options, signal },
          "application/x-ndjson",
        ),
      options.signal,
      options.timeout ?? this.#transport.timeout,
    );
  }
}
