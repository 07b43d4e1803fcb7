import { AppError } from "@agentry/errors";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Router } from "@koa/router";
import type { ParameterizedContext } from "koa";
import * as oidc from "openid-client";
import type { GatewayContext, GatewayState } from "../context.js";
import { setSessionCookies } from "./console-session.js";

/** Where the console starts an OIDC sign-in, and where the provider sends the browser back. */
export const OIDC_STATUS_PATH = "/console/oidc";
export const OIDC_START_PATH = "/console/oidc/start";
export const OIDC_CALLBACK_PATH = "/console/oidc/callback";
/** The sign-in in flight (PKCE verifier, state, nonce): HttpOnly, and only for the callback's path. */
const FLIGHT_COOKIE = "agentry_oidc";
const FLIGHT_MS = 10 * 60_000;

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
    if (!verifier || !state || !nonce) {
      throw new AppError(
        "UNAUTHORIZED",
        "The sign-in was not started here, or took too long: sign in again.",
      );
    }
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
    if (typeof email !== "string" || verified !== true) {
      throw new AppError(
        "FORBIDDEN",
        "Your identity provider did not vouch for your email address (a verified `email` claim): ask its administrator.",
      );
    }
    return email;
  }
}

function page(title: string, text: string): string {
  const html = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${html(title)}</title><main><h1>${html(title)}</h1><p>${html(text)}</p><p><a href="/console/sign-in">Back to sign-in</a></p></main></html>`;
}

function refuse(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.type = "html";
  ctx.set("Cache-Control", "no-store");
  ctx.body = page("Sign-in refused", text);
}

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
    const { url, flight } = await signIn.start();
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

  router.get(OIDC_CALLBACK_PATH, async (ctx) => {
    const flight = ctx.cookies.get(FLIGHT_COOKIE) ?? "";
    ctx.cookies.set(FLIGHT_COOKIE, "", { path: OIDC_CALLBACK_PATH, expires: new Date(0), overwrite: true });
    let email: string;
    try {
      const callback = new URL(signIn.redirectUrl);
      callback.search = ctx.querystring;
      email = await signIn.finish(callback, flight);
    } catch (error) {
      const text =
        error instanceof AppError
          ? error.message
          : `The identity provider's answer could not be used (${error instanceof Error ? error.message : "unknown error"}): sign in again.`;
      return refuse(ctx, 401, text);
    }
    const { members } = await gateway.accounts.findMembersByEmail({ email }, rpc(ctx));
    // A person in several accounts signs in to the one they joined first.
    const member = members[0];
    if (!member) {
      return refuse(
        ctx,
        403,
        `No account has a member with the email ${email}: ask an owner or admin of your account to invite you.`,
      );
    }
    const { secret, session } = await gateway.sessions.open(member.accountId, member.id, rpc(ctx));
    setSessionCookies(gateway, ctx, secret, timestampDate(session.expireTime!));
    ctx.set("Cache-Control", "no-store");
    ctx.redirect("/console/agents");
  });
}
