import { randomBytes } from "node:crypto";
import { sha256Hex } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { Member } from "@agentry/proto";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Router } from "@koa/router";
import type { ParameterizedContext } from "koa";
import * as oidc from "openid-client";
import type { GatewayContext, GatewayState } from "../context.js";
import { readJsonBody } from "./body.js";
import { overHttps, presentSession, roleOf, setSessionCookies } from "./console-session.js";

/** Where the console starts an OIDC sign-in, and where the provider sends the browser back. */
export const OIDC_STATUS_PATH = "/console/oidc";
export const OIDC_START_PATH = "/console/oidc/start";
export const OIDC_CALLBACK_PATH = "/console/oidc/callback";
/** Where a person who is a member of several accounts reads them and picks the one to sign in to. */
export const OIDC_ACCOUNTS_PATH = "/console/oidc/accounts";
/** The console's sign-in page, where the callback sends the browser when it cannot sign it in at once. */
const SIGN_IN_PAGE = "/console/sign-in";
/** The sign-in in flight (PKCE verifier, state, nonce): HttpOnly, and only for the callback's path. */
const FLIGHT_COOKIE = "agentry_oidc";
const FLIGHT_MS = 10 * 60_000;
/** The accounts a signed-in email may pick from, each with a one-time link of its own: HttpOnly, one path. */
const CHOICE_COOKIE = "agentry_oidc_accounts";
/** Enough for anyone, and small enough for one cookie (about 150 bytes each). */
const MAX_CHOICES = 20;

/**
 * Why the callback sends the browser back to the sign-in page instead of signing it in (`?sso=` there): `pick`
 * (the email is a member of several accounts), or a refusal the page words with what to do.
 */
export type SsoOutcome =
  | "pick"
  | "no-member"
  | "unverified"
  | "expired"
  | "denied"
  | "failed"
  | "unavailable";

/** A refusal of the provider's answer, by its outcome on the sign-in page. */
class Refused extends Error {
  constructor(readonly outcome: "unverified" | "expired" | "denied") {
    super(outcome);
  }
}

/** One account an email may sign in to, as the choice cookie keeps it. */
interface Choice {
  /** A one-time sign-in link's token for this account's member: redeemed when picked. */
  token: string;
  account: { id: string; name: string };
  role: string;
}

type Context = ParameterizedContext<GatewayState>;

/**
 * The console's OIDC sign-in (authorization code with PKCE, `openid-client`): the provider's verified email maps to
 * a member, and the session acts with that member's role. The provider's metadata is read once, when first needed.
 */
export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(private readonly gateway: GatewayContext) {}

  get redirectUrl(): string {
    const { OIDC_REDIRECT_URL, PUBLIC_BASE_URL } = this.gateway.config;
    return OIDC_REDIRECT_URL ?? `${PUBLIC_BASE_URL}${OIDC_CALLBACK_PATH}`;
  }

  private config(): Promise<oidc.Configuration> {
    const { OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } = this.gateway.config;
    const issuer = new URL(OIDC_ISSUER!);
    this.configuration ??= oidc
      .discovery(
        issuer,
        OIDC_CLIENT_ID!,
        OIDC_CLIENT_SECRET,
        undefined,
        // A provider on plain http is one on this machine or network (a test, a local one): allowed as configured.
        issuer.protocol === "http:" ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  /** The provider's authorization URL for a new sign-in, and what the callback must check it against. */
  async start(): Promise<{ url: string; flight: string }> {
    const config = await this.config();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUrl,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return { url: url.href, flight: [verifier, state, nonce].join(".") };
  }

  /** The provider's answer redeemed: the verified email it vouches for. */
  async finish(callbackUrl: URL, flight: string): Promise<string> {
    const [verifier, state, nonce] = flight.split(".");
    if (!verifier || !state || !nonce) throw new Refused("expired");
    // The person declined, or the provider refused them, before any code was issued.
    if (callbackUrl.searchParams.get("error") === "access_denied") throw new Refused("denied");
    const config = await this.config();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = tokens.claims()!;
    let email = claims.email;
    let verified = claims.email_verified;
    if (typeof email !== "string") {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = info.email;
      verified = info.email_verified;
    }
    if (typeof email !== "string" || verified !== true) throw new Refused("unverified");
    return email;
  }
}

/** The console's sign-in page with the callback's outcome, which the page words (`email`: the one signed in). */
function backToSignIn(ctx: Context, outcome: SsoOutcome, email?: string): void {
  const query = new URLSearchParams({ sso: outcome, ...(email ? { email } : {}) });
  ctx.set("Cache-Control", "no-store");
  ctx.redirect(`${SIGN_IN_PAGE}?${query}`);
}

function encodeChoices(email: string, choices: Choice[]): string {
  return Buffer.from(JSON.stringify({ email, choices })).toString("base64url");
}

/**
 * The choices the cookie carries. The cookie is HttpOnly and only this gateway writes it; what the browser could
 * change in it is the names shown, never what a pick signs in to: that is the registry's record of each link.
 */
function decodeChoices(value: string | undefined): { email: string; choices: Choice[] } | null {
  if (!value) return null;
  try {
    const parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as {
      email?: unknown;
      choices?: unknown;
    };
    if (typeof parsed.email !== "string" || !Array.isArray(parsed.choices)) return null;
    const choices = parsed.choices.filter(
      (choice): choice is Choice =>
        typeof choice?.token === "string" &&
        typeof choice.account?.id === "string" &&
        typeof choice.account.name === "string" &&
        typeof choice.role === "string",
    );
    return { email: parsed.email, choices };
  } catch {
    return null;
  }
}

const NO_CHOICE = "No account choice is waiting, or it took more than ten minutes: sign in with SSO again.";

/** The OIDC sign-in routes, when OIDC_ISSUER is set; `GET /console/oidc` says whether it is. */
export function oidcRoutes(router: Router<GatewayState>, gateway: GatewayContext): void {
  const enabled = gateway.config.OIDC_ISSUER !== undefined;
  router.get(OIDC_STATUS_PATH, (ctx) => {
    ctx.body = { success: true, data: { enabled, startUrl: enabled ? OIDC_START_PATH : null } };
  });
  if (!enabled) return;
  const signIn = new OidcSignIn(gateway);
  const rpc = (ctx: Context) => ({
    headers: { "x-request-id": ctx.state.requestId },
    timeoutMs: gateway.config.RPC_TIMEOUT_MS,
  });

  router.get(OIDC_START_PATH, async (ctx) => {
    let started: { url: string; flight: string };
    try {
      started = await signIn.start();
    } catch (error) {
      gateway.logger.warn(
        { err: error, requestId: ctx.state.requestId },
        "an OIDC sign-in could not start: the provider's metadata could not be read",
      );
      return backToSignIn(ctx, "unavailable");
    }
    const { url, flight } = started;
    // Lax, not Strict: the provider's redirect back is a navigation from its site, which must carry it.
    ctx.cookies.set(FLIGHT_COOKIE, flight, {
      path: OIDC_CALLBACK_PATH,
      httpOnly: true,
      sameSite: "lax",
      maxAge: FLIGHT_MS,
      overwrite: true,
    });
    ctx.set("Cache-Control", "no-store");
    ctx.redirect(url);
  });

  const choiceCookie = (ctx: Context, value: string, expires: Date) => {
    const secure = overHttps(gateway, ctx);
    ctx.cookies.secure = secure;
    ctx.cookies.set(CHOICE_COOKIE, value, {
      path: OIDC_ACCOUNTS_PATH,
      httpOnly: true,
      sameSite: "strict",
      secure,
      expires,
      overwrite: true,
    });
  };

  /** One one-time link per account the email is a member of, kept in the choice cookie for the pick. */
  const offerChoices = async (ctx: Context, email: string, members: Member[]) => {
    const expireMs = Date.now() + FLIGHT_MS;
    const choices = await Promise.all(
      members.slice(0, MAX_CHOICES).map(async (member): Promise<Choice> => {
        const token = randomBytes(32).toString("base64url");
        const [{ account }] = await Promise.all([
          gateway.accounts.getAccount({ lookup: { case: "id", value: member.accountId } }, rpc(ctx)),
          gateway.accounts.createConsoleLink(
            {
              accountId: member.accountId,
              memberId: member.id,
              tokenSha256: sha256Hex(token),
              expireTime: timestampFromMs(expireMs),
            },
            rpc(ctx),
          ),
        ]);
        return { token, account: { id: member.accountId, name: account!.name }, role: roleOf(member) };
      }),
    );
    choiceCookie(ctx, encodeChoices(email, choices), new Date(expireMs));
    backToSignIn(ctx, "pick", email);
  };

  router.get(OIDC_CALLBACK_PATH, async (ctx) => {
    const flight = ctx.cookies.get(FLIGHT_COOKIE) ?? "";
    ctx.cookies.set(FLIGHT_COOKIE, "", { path: OIDC_CALLBACK_PATH, expires: new Date(0), overwrite: true });
    let email: string;
    try {
      const callback = new URL(signIn.redirectUrl);
      callback.search = ctx.querystring;
      email = await signIn.finish(callback, flight);
    } catch (error) {
      if (error instanceof Refused) return backToSignIn(ctx, error.outcome);
      gateway.logger.warn(
        { err: error, requestId: ctx.state.requestId },
        "an OIDC sign-in failed: the provider's answer could not be used",
      );
      return backToSignIn(ctx, "failed");
    }
    const { members } = await gateway.accounts.findMembersByEmail({ email }, rpc(ctx));
    if (members.length === 0) return backToSignIn(ctx, "no-member", email);
    // A person in several accounts picks one; the accounts come oldest membership first.
    if (members.length > 1) return offerChoices(ctx, email, members);
    const member = members[0]!;
    const { secret, session } = await gateway.sessions.open(member.accountId, member.id, rpc(ctx));
    setSessionCookies(gateway, ctx, secret, timestampDate(session.expireTime!));
    ctx.set("Cache-Control", "no-store");
    ctx.redirect("/console/agents");
  });

  router.get(OIDC_ACCOUNTS_PATH, (ctx) => {
    const waiting = decodeChoices(ctx.cookies.get(CHOICE_COOKIE));
    if (!waiting) throw new AppError("UNAUTHORIZED", NO_CHOICE);
    ctx.set("Cache-Control", "no-store");
    ctx.body = {
      success: true,
      data: {
        email: waiting.email,
        accounts: waiting.choices.map(({ account, role }) => ({ ...account, role })),
      },
    };
  });

  router.post(OIDC_ACCOUNTS_PATH, async (ctx) => {
    // JSON only, as the link sign-in: another site's form cannot send it (and the cookie is SameSite=Strict).
    const body = await readJsonBody(ctx);
    const accountId =
      typeof body === "object" && body !== null ? (body as { accountId?: unknown }).accountId : undefined;
    if (typeof accountId !== "string") {
      throw new AppError("INVALID_REQUEST", 'Send the account you pick as {"accountId": "acc_..."}.', {
        details: [{ field: "accountId", issue: "is required and must be a string" }],
      });
    }
    const waiting = decodeChoices(ctx.cookies.get(CHOICE_COOKIE));
    if (!waiting) throw new AppError("UNAUTHORIZED", NO_CHOICE);
    const choice = waiting.choices.find((offered) => offered.account.id === accountId);
    if (!choice) {
      throw new AppError("INVALID_REQUEST", "Pick one of the accounts offered for your email.", {
        details: [
          { field: "accountId", issue: `is not one of the accounts ${waiting.email} may sign in to` },
        ],
      });
    }
    choiceCookie(ctx, "", new Date(0));
    const { secret, session, account, member } = await gateway.sessions
      .signIn(choice.token, rpc(ctx))
      .catch((error: unknown) => {
        throw error instanceof AppError && error.code === "UNAUTHORIZED"
          ? new AppError(
              "UNAUTHORIZED",
              "This account choice was used or has expired: sign in with SSO again.",
            )
          : error;
      });
    setSessionCookies(gateway, ctx, secret, timestampDate(session.expireTime!));
    ctx.set("Cache-Control", "no-store");
    ctx.status = 201;
    ctx.body = { success: true, data: presentSession(session, account, member) };
  });
}
