import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { FULL_ACCESS, grantedScopes, ROLE_SCOPES, type Role, sha256Hex } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type Account,
  type AccountService,
  type ConsoleSession,
  type Member,
  Role as RoleEnum,
} from "@agentry/proto";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { type CallOptions, type Client, Code, ConnectError } from "@connectrpc/connect";
import type { Router } from "@koa/router";
import type { ParameterizedContext } from "koa";
import type { GatewayContext, GatewayState, Principal } from "../context.js";
import { accountPlan } from "./auth.js";
import { readJsonBody } from "./body.js";

/** The cookie that carries a console session's secret: HttpOnly, so no script of any page can read it. */
export const SESSION_COOKIE = "agentry_session";
/**
 * The cookie that carries the session's CSRF token: readable by the console's script, which sends it back in
 * `X-CSRF-Token` with every unsafe request (double submit). Another site can neither read it nor set the header.
 */
export const CSRF_COOKIE = "agentry_csrf";
export const CSRF_HEADER = "x-csrf-token";
/** Where the console asks for, reads and ends its session (not part of the public REST API). */
export const SESSION_PATH = "/console/session";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const SESSION_ENDED = "The console session has ended: sign in again with a new link.";
/** Secrets and tokens are 32 random bytes in base64url. */
const SECRET = /^[A-Za-z0-9_-]{43}$/;

interface Entry {
  principal: Promise<Principal>;
  staleAtMs: number;
}

const MAX_ENTRIES = 10_000;

/** The CSRF token of a session, derived from its secret: nothing to store, and it dies with the session. */
export function csrfTokenOf(secret: string): string {
  return createHmac("sha256", secret).update("agentry console csrf").digest("base64url");
}

export interface SessionTimeouts {
  idleMs: number;
  absoluteMs: number;
}

const ROLES: Record<RoleEnum, Role | undefined> = {
  [RoleEnum.UNSPECIFIED]: undefined,
  [RoleEnum.OWNER]: "owner",
  [RoleEnum.ADMIN]: "admin",
  [RoleEnum.DEVELOPER]: "developer",
  [RoleEnum.VIEWER]: "viewer",
};

/** A member's role as the registry sends it; a role this gateway does not know is refused, never widened. */
export function roleOf(member: Member): Role {
  const role = ROLES[member.role];
  if (role === undefined) throw new AppError("UNAUTHORIZED", SESSION_ENDED);
  return role;
}

/** What a session of a member of this role may do (ROLE_SCOPES): an owner holds every scope. */
export function memberAccess(member: Member): Pick<Principal, "member" | "actor" | "scopes" | "fullAccess"> {
  const role = roleOf(member);
  const grant = ROLE_SCOPES[role];
  return {
    member: { id: member.id, role },
    actor: { type: "member", id: member.id },
    scopes: new Set(grantedScopes(grant)),
    fullAccess: grant === FULL_ACCESS,
  };
}

/**
 * Console sessions: a one-time sign-in link (made by `agentry console link`) or an OIDC sign-in opens a session
 * whose secret lives only in an HttpOnly cookie; the registry keeps its SHA-256, so sessions hold across gateways
 * and restarts. A session acts for its member with the scopes of the member's role (ROLE_SCOPES), read again
 * whenever the session is verified. Verified sessions are trusted for `ttlMs`, as keys are; a sign-out through
 * this gateway drops the entry at once.
 */
export class ConsoleSessions {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly accounts: Client<typeof AccountService>,
    private readonly timeouts: SessionTimeouts,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Redeems a sign-in link's token for a new session; the secret returned goes into the cookie. */
  async signIn(
    token: string,
    options: CallOptions,
  ): Promise<{ secret: string; session: ConsoleSession; account: Account; member: Member }> {
    if (!SECRET.test(token))
      throw new AppError("UNAUTHORIZED", "The sign-in link is malformed: copy it whole.");
    const secret = randomBytes(32).toString("base64url");
    const now = this.now();
    try {
      const { session, account, member } = await this.accounts.redeemConsoleLink(
        {
          tokenSha256: sha256Hex(token),
          sessionSha256: sha256Hex(secret),
          expireTime: timestampFromMs(now + this.timeouts.absoluteMs),
          idleTimeoutSeconds: Math.max(1, Math.round(this.timeouts.idleMs / 1000)),
        },
        options,
      );
      return { secret, session: session!, account: account!, member: member! };
    } catch (error) {
      throw unauthorized(error, "The sign-in link is invalid, used or expired: ask for a new one.");
    }
  }

  /** Opens a session for a member signed in by OIDC; the secret returned goes into the cookie. */
  async open(
    accountId: string,
    memberId: string,
    options: CallOptions,
  ): Promise<{ secret: string; session: ConsoleSession; account: Account; member: Member }> {
    const secret = randomBytes(32).toString("base64url");
    const { session, account, member } = await this.accounts.openConsoleSession(
      {
        accountId,
        memberId,
        sessionSha256: sha256Hex(secret),
        expireTime: timestampFromMs(this.now() + this.timeouts.absoluteMs),
        idleTimeoutSeconds: Math.max(1, Math.round(this.timeouts.idleMs / 1000)),
      },
      options,
    );
    return { secret, session: session!, account: account!, member: member! };
  }

  /** The session's caller; a session that ended, idled out or expired is 401. */
  authenticate(secret: string, options: CallOptions): Promise<Principal> {
    if (!SECRET.test(secret)) return Promise.reject(new AppError("UNAUTHORIZED", SESSION_ENDED));
    const sha256 = sha256Hex(secret);
    const now = this.now();
    let entry = this.entries.get(sha256);
    if (!entry || entry.staleAtMs <= now) {
      entry = this.lookUp(sha256, options);
    }
    return entry.principal;
  }

  /** The session as the registry has it now, with its account. */
  async describe(
    secret: string,
    options: CallOptions,
  ): Promise<{ session: ConsoleSession; account: Account; member: Member }> {
    if (!SECRET.test(secret)) throw new AppError("UNAUTHORIZED", SESSION_ENDED);
    try {
      const { session, account, member } = await this.accounts.verifyConsoleSession(
        { sessionSha256: sha256Hex(secret) },
        options,
      );
      return { session: session!, account: account!, member: member! };
    } catch (error) {
      throw unauthorized(error, SESSION_ENDED);
    }
  }

  async signOut(secret: string, options: CallOptions): Promise<void> {
    if (!SECRET.test(secret)) return;
    const sha256 = sha256Hex(secret);
    this.entries.delete(sha256);
    await this.accounts.endConsoleSession({ sessionSha256: sha256 }, options);
  }

  private lookUp(sha256: string, options: CallOptions): Entry {
    const entry: Entry = {
      staleAtMs: this.now() + this.ttlMs,
      principal: this.accounts.verifyConsoleSession({ sessionSha256: sha256 }, options).then(
        ({ session, account, member }) => ({
          keyId: "",
          sessionId: session!.id,
          accountId: account!.id,
          ...memberAccess(member!),
          ...accountPlan(account!),
        }),
        (error: unknown) => {
          throw unauthorized(error, SESSION_ENDED);
        },
      ),
    };
    entry.principal.catch(() => {
      if (this.entries.get(sha256) === entry) this.entries.delete(sha256);
    });
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(sha256, entry);
    return entry;
  }
}

/** The registry's refusal becomes 401 with our words; anything else (the registry unreachable) stays as it is. */
function unauthorized(error: unknown, message: string): unknown {
  const refused =
    error instanceof ConnectError
      ? error.code === Code.Unauthenticated
      : error instanceof AppError && error.code === "UNAUTHORIZED";
  return refused ? new AppError("UNAUTHORIZED", message) : error;
}

type Context = ParameterizedContext<GatewayState>;

/**
 * The caller of a REST request: its `Authorization: Bearer` key when it sends one, else its console session
 * cookie. A cookie-authenticated unsafe request must also carry the session's CSRF token in `X-CSRF-Token`.
 */
export function authenticateRequest(
  gateway: GatewayContext,
  ctx: Context,
  options: CallOptions,
): Promise<Principal> {
  const authorization = ctx.get("authorization");
  const secret = authorization === "" ? ctx.cookies.get(SESSION_COOKIE) : undefined;
  if (!secret) return gateway.auth.authenticate(authorization, options);
  if (!SAFE_METHODS.has(ctx.method)) requireCsrfToken(ctx, secret);
  return gateway.sessions.authenticate(secret, options);
}

function requireCsrfToken(ctx: Context, secret: string): void {
  const sent = Buffer.from(ctx.get(CSRF_HEADER));
  const expected = Buffer.from(csrfTokenOf(secret));
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
    throw new AppError(
      "FORBIDDEN",
      `A request made with a console session must send the session's CSRF token in the '${CSRF_HEADER}' header.`,
    );
  }
}

/**
 * Whether the request reached this deployment over https: TLS to this process, or, behind a proxy trusted with
 * TRUST_PROXY, the proxy's `X-Forwarded-Proto`; a public base URL in https says so too.
 */
export function overHttps(gateway: GatewayContext, ctx: Context): boolean {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted) return true;
  if (gateway.config.PUBLIC_BASE_URL.startsWith("https://")) return true;
  if (!gateway.config.TRUST_PROXY) return false;
  return ctx.get("x-forwarded-proto").split(",")[0]?.trim().toLowerCase() === "https";
}

export function setSessionCookies(
  gateway: GatewayContext,
  ctx: Context,
  secret: string | null,
  expires: Date,
): void {
  const common = {
    path: "/",
    sameSite: "strict" as const,
    secure: overHttps(gateway, ctx),
    expires,
    overwrite: true,
  };
  // Koa refuses to set a Secure cookie on what it takes for plain http; whether the request is https is decided
  // above, so it is told so.
  ctx.cookies.secure = common.secure;
  ctx.cookies.set(SESSION_COOKIE, secret ?? "", { ...common, httpOnly: true });
  ctx.cookies.set(CSRF_COOKIE, secret === null ? "" : csrfTokenOf(secret), { ...common, httpOnly: false });
}

/** A session as the console reads it: its account, its member and the scopes of the member's role. */
export function presentSession(session: ConsoleSession, account: Account, member: Member) {
  const access = memberAccess(member);
  return {
    id: session.id,
    account: { id: account.id, name: account.name },
    member: { id: member.id, email: member.email || null, name: member.name, role: roleOf(member) },
    scopes: [...access.scopes],
    createdAt: timestampDate(session.createTime!).toISOString(),
    expiresAt: timestampDate(session.expireTime!).toISOString(),
    idleTimeoutSeconds: session.idleTimeoutSeconds,
  };
}

function rpcOptions(gateway: GatewayContext, ctx: Context): CallOptions {
  return { headers: { "x-request-id": ctx.state.requestId }, timeoutMs: gateway.config.RPC_TIMEOUT_MS };
}

/**
 * The console's own session routes, outside the public REST API: `POST` redeems a sign-in link's token (sent in
 * the body, never in a URL a log would keep) for a session cookie, `GET` describes the session, `DELETE` signs out.
 */
export function consoleSessionRoutes(router: Router<GatewayState>, gateway: GatewayContext): void {
  router.post(SESSION_PATH, async (ctx) => {
    // Only JSON is read, which another site's form cannot send and its scripts cannot without a CORS preflight
    // this gateway never grants: no other site can sign a browser in to an account of its choosing.
    const body = await readJsonBody(ctx);
    const token = typeof body === "object" && body !== null ? (body as { token?: unknown }).token : undefined;
    if (typeof token !== "string") {
      throw new AppError("INVALID_REQUEST", 'Send the sign-in link\'s token as {"token": "..."}.', {
        details: [{ field: "token", issue: "is required and must be a string" }],
      });
    }
    const unknown = Object.keys(body as object).filter((field) => field !== "token");
    if (unknown.length > 0) {
      throw new AppError("INVALID_REQUEST", 'Send the sign-in link\'s token alone, as {"token": "..."}.', {
        details: unknown.map((field) => ({ field, issue: "is not a field of this request" })),
      });
    }
    const { secret, session, account, member } = await gateway.sessions.signIn(
      token,
      rpcOptions(gateway, ctx),
    );
    setSessionCookies(gateway, ctx, secret, timestampDate(session.expireTime!));
    ctx.set("Cache-Control", "no-store");
    ctx.status = 201;
    ctx.body = { success: true, data: presentSession(session, account, member) };
  });

  router.get(SESSION_PATH, async (ctx) => {
    const secret = ctx.cookies.get(SESSION_COOKIE);
    if (!secret)
      throw new AppError("UNAUTHORIZED", "Not signed in: open a sign-in link from 'agentry console link'.");
    const { session, account, member } = await gateway.sessions.describe(secret, rpcOptions(gateway, ctx));
    ctx.set("Cache-Control", "no-store");
    ctx.body = { success: true, data: presentSession(session, account, member) };
  });

  router.delete(SESSION_PATH, async (ctx) => {
    const secret = ctx.cookies.get(SESSION_COOKIE);
    if (secret) {
      requireCsrfToken(ctx, secret);
      await gateway.sessions.signOut(secret, rpcOptions(gateway, ctx));
    }
    setSessionCookies(gateway, ctx, null, new Date(0));
    ctx.body = { success: true, data: { signedOut: true } };
  });
}
