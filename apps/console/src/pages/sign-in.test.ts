// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { ssoRefusal } from "./sign-in";

describe("the sign-in page's words for an OIDC sign-in sent back to it", () => {
  it("says nothing without a refusal, and nothing when there are accounts to pick from", () => {
    expect(ssoRefusal(null, null)).toBeNull();
    expect(ssoRefusal("pick", "ada@example.com")).toBeNull();
  });

  it("names the email no account has, and says to ask for an invitation", () => {
    expect(ssoRefusal("no-member", "eve@example.com")).toBe(
      "No account here has a member with the email eve@example.com. Ask an owner or admin of your account to invite that address, then sign in with SSO again.",
    );
  });

  it("says what to do for every other outcome, an unknown one included", () => {
    expect(ssoRefusal("unverified", null)).toMatch(
      /did not vouch for your email address.*Ask its administrator/,
    );
    expect(ssoRefusal("expired", null)).toMatch(/took more than ten minutes\. Sign in with SSO again\.$/);
    expect(ssoRefusal("denied", null)).toMatch(/you declined there\. Sign in with SSO again to retry\.$/);
    expect(ssoRefusal("unavailable", null)).toMatch(/could not be reached\. Try again in a moment/);
    expect(ssoRefusal("failed", null)).toMatch(/ask whoever runs this service to check its OIDC settings/);
    expect(ssoRefusal("something-new", null)).toBe(ssoRefusal("failed", null));
  });
});
