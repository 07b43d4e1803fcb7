import { randomBytes } from "node:crypto";
import { sha256Hex } from "@agentry/core";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "vitest";
import type { Harness, TestResponse } from "./harness.js";

/** A signed-in console session, as a browser holds it. */
export interface ConsoleSession {
  cookie: string;
  csrf: string;
  /** Requests the REST API with the session's cookie (and its CSRF token on unsafe methods). */
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<TestResponse<T>>;
}

/** Signs in to the console as a member, through a sign-in link made for them as `agentry console link --member` makes it. */
export async function signInAs(h: Harness, accountId: string, memberId?: string): Promise<ConsoleSession> {
  const token = randomBytes(32).toString("base64url");
  await h.gateway.context.accounts.createConsoleLink({
    accountId,
    tokenSha256: sha256Hex(token),
    expireTime: timestampFromMs(Date.now() + 600_000),
    ...(memberId ? { memberId } : {}),
  });
  const res = await fetch(`${h.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });
  expect(res.status).toBe(201);
  const setCookies = res.headers.getSetCookie();
  const value = (name: string) =>
    setCookies
      .find((c) => c.startsWith(`${name}=`))!
      .split(";")[0]!
      .slice(name.length + 1);
  const csrf = value("agentry_csrf");
  const cookie = `agentry_session=${value("agentry_session")}; agentry_csrf=${csrf}`;
  return {
    cookie,
    csrf,
    request: (method, path, body) =>
      h.request(method, path, {
        headers: { cookie, ...(method === "GET" ? {} : { "x-csrf-token": csrf }) },
        ...(body !== undefined ? { body } : {}),
      }),
  };
}

/** Adds a member of the role to the account, through the registry. */
export async function addMember(
  h: Harness,
  accountId: string,
  role: "owner" | "admin" | "developer" | "viewer",
  email = `${role}-${randomBytes(4).toString("hex")}@example.com`,
): Promise<string> {
  const { Role } = await import("@agentry/proto");
  const roles = { owner: Role.OWNER, admin: Role.ADMIN, developer: Role.DEVELOPER, viewer: Role.VIEWER };
  const { member } = await h.gateway.context.accounts.createMember({
    accountId,
    email,
    name: role,
    role: roles[role],
  });
  return member!.id;
}
