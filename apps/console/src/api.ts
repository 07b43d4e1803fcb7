/**
 * The console's only way to the service: the public REST API (`/v1/...`) on this origin, authenticated by the
 * session cookie the browser sends by itself. Unsafe requests repeat the session's CSRF token, read from its
 * cookie, in `X-CSRF-Token`. No key or secret is ever kept by the page.
 */

import type { CursorPagination, FieldIssue } from "@agentry/sdk";

/** An error as the API words it (the error envelope), or a network failure worded the same way. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldIssue[] = [],
    readonly requestId?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** An answer's data; `P` is the pagination of a list (`Pagination` of pages, `CursorPagination` of cursors). */
export interface ApiResult<T, P extends CursorPagination = CursorPagination> {
  data: T;
  pagination?: P;
  /** What was written but will not act (an import's plugins kept disabled, a provider not configured here). */
  warnings?: FieldIssue[];
}

/** The rate-limit bucket with the least left, as the latest response reported it. */
export interface RateLimit {
  limit: number;
  remaining: number;
  /** Unix seconds at which the bucket is full again. */
  reset: number;
  /** The bucket's name (`X-RateLimit-Bucket`: `requestsPerMinute`, `createPerMinute`, ...), when reported. */
  bucket?: string;
}

type Listener<T> = (value: T) => void;

/** A value that pages and widgets can follow. */
export class Observable<T> {
  private readonly listeners = new Set<Listener<T>>();
  constructor(public value: T) {}
  set(value: T): void {
    this.value = value;
    for (const listener of this.listeners) listener(value);
  }
  subscribe(listener: Listener<T>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export const rateLimit = new Observable<RateLimit | null>(null);
/** Set when the API answers 401: the session has ended and the console shows the sign-in page. */
export const signedOut = new Observable<boolean>(false);

export const CSRF_COOKIE = "agentry_csrf";
export const CSRF_HEADER = "X-CSRF-Token";

export function readCookie(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

const SAFE = new Set(["GET", "HEAD"]);

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export function withQuery(path: string, query: RequestOptions["query"]): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** Sends a request and answers the raw response: for streams and downloads. Errors before a body are thrown. */
export async function send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (!SAFE.has(method)) {
    const token = readCookie(document.cookie, CSRF_COOKIE);
    if (token) headers[CSRF_HEADER] = token;
  }
  let body: string | FormData | undefined;
  // A form (a file upload) goes as multipart/form-data: the browser writes its Content-Type with the boundary.
  if (options.body instanceof FormData) body = options.body;
  else if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: "same-origin",
      ...(body !== undefined ? { body } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(
      0,
      "NETWORK_ERROR",
      "The service could not be reached. Check the connection and try again.",
    );
  }
  noteRateLimit(response.headers);
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** A JSON request answered in the success envelope. */
export async function api<T, P extends CursorPagination = CursorPagination>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResult<T, P>> {
  const response = await send(method, path, options);
  const envelope = (await response.json()) as { data: T; pagination?: P; warnings?: FieldIssue[] };
  return {
    data: envelope.data,
    ...(envelope.pagination ? { pagination: envelope.pagination } : {}),
    ...(envelope.warnings ? { warnings: envelope.warnings } : {}),
  };
}

export async function errorOf(response: Response): Promise<ApiError> {
  let error: ApiError;
  try {
    const body = (await response.json()) as {
      error?: { code: string; message: string; details?: FieldIssue[]; requestId?: string };
    };
    const e = body.error!;
    error = new ApiError(response.status, e.code, e.message, e.details ?? [], e.requestId);
  } catch {
    error = new ApiError(response.status, "HTTP_ERROR", `The service answered ${response.status}.`);
  }
  if (response.status === 401) signedOut.set(true);
  return error;
}

function noteRateLimit(headers: Headers): void {
  const limit = headers.get("x-ratelimit-limit");
  const remaining = headers.get("x-ratelimit-remaining");
  const reset = headers.get("x-ratelimit-reset");
  const bucket = headers.get("x-ratelimit-bucket");
  if (limit === null || remaining === null) return;
  rateLimit.set({
    limit: Number(limit),
    remaining: Number(remaining),
    reset: Number(reset ?? 0),
    ...(bucket ? { bucket } : {}),
  });
}

/** The session the console runs in. */
export interface ConsoleSession {
  id: string;
  account: { id: string; name: string };
  /** Who is signed in; the session acts with the scopes of their role. */
  member: { id: string; email: string | null; name: string; role: string };
  scopes: string[];
  createdAt: string;
  expiresAt: string;
  idleTimeoutSeconds: number;
}

export const session = {
  current: () => api<ConsoleSession>("GET", "/console/session"),
  signIn: (token: string) => api<ConsoleSession>("POST", "/console/session", { body: { token } }),
  signOut: () => api<{ signedOut: true }>("DELETE", "/console/session"),
};

/** Whether this deployment signs people in by OIDC (`GET /console/oidc`), and where a sign-in starts. */
export interface OidcStatus {
  enabled: boolean;
  startUrl: string | null;
}

/** An account a person signed in by OIDC may pick, with the role they hold in it. */
export interface AccountChoice {
  id: string;
  name: string;
  role: string;
}

export const sso = {
  status: () => api<OidcStatus>("GET", "/console/oidc"),
  /** The accounts the email just signed in by OIDC is a member of (more than one), while the choice is open. */
  choices: () => api<{ email: string; accounts: AccountChoice[] }>("GET", "/console/oidc/accounts"),
  pick: (accountId: string) => api<ConsoleSession>("POST", "/console/oidc/accounts", { body: { accountId } }),
};
