import { grantedScopes, ROLE_SCOPES, ROLES, type Role } from "@agentry/core";
import { ROUTES } from "@agentry/gateway";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness } from "./harness.js";
import { addMember, type ConsoleSession, signInAs } from "./members-helpers.js";

/*
 * Roles enforced on every route: one row per declared operation (ROUTES, as the router serves them) and role, the
 * expected answer read from the operation's scope and the role's scopes (ROLE_SCOPES). A forbidden call is 403
 * naming the role; an allowed one gets past the scope check (it may still be 400 or 404 on its made-up input).
 */

const SAMPLE_IDS: Record<string, string> = {
  agentId: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  memberId: "usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  keyId: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
};

/** The route's path with a well-formed, unknown value for each parameter. */
function samplePath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => SAMPLE_IDS[name] ?? `sample-${name}`);
}

const scoped = ROUTES.filter((route) => route.scope !== null);

let h: Harness;
const sessions = new Map<Role, ConsoleSession>();
beforeAll(async () => {
  h = await startHarness();
  const tenant = await h.tenant();
  for (const role of ROLES) {
    const memberId = role === "owner" ? undefined : await addMember(h, tenant.accountId, role);
    sessions.set(role, await signInAs(h, tenant.accountId, memberId));
  }
});
afterAll(async () => {
  await h.close();
});

describe("roles on every route", () => {
  it("covers every scoped route the gateway declares", () => {
    expect(scoped.length).toBeGreaterThan(30);
    expect(scoped.map((route) => route.operationId)).toContain("inviteMember");
  });

  for (const role of ROLES) {
    const held = new Set(grantedScopes(ROLE_SCOPES[role]));
    it.each(scoped.map((route) => [`${route.method} ${route.path}`, route] as const))(
      `${role}: %s`,
      async (_, route) => {
        const session = sessions.get(role)!;
        const allowed = held.has(route.scope!);
        // An empty body: refused by most writes once they are allowed; one that takes it (a key) acts in this
        // test's own account.
        const body = route.method === "GET" || route.method === "DELETE" ? undefined : {};
        const res = await session.request<ErrorBody>(route.method, samplePath(route.path), body);
        if (allowed) {
          expect(res.status, JSON.stringify(res.body)).not.toBe(403);
          expect(res.status).not.toBe(401);
        } else {
          expect(res.status, JSON.stringify(res.body)).toBe(403);
          expect(res.body.error.message).toContain(`Your role '${role}'`);
          expect(res.body.error.message).toContain(route.scope);
        }
      },
    );
  }
});
