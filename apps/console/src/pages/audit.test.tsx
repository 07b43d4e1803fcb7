// @vitest-environment happy-dom
import { render } from "preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type AuditEvent,
  AuditPage,
  actorWords,
  changeRows,
  exportUrl,
  NO_FILTERS,
  neighbours,
  pageQuery,
} from "./audit";

afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = "";
});

function event(id: string, extra: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id,
    at: "2026-11-29T05:00:00.000Z",
    actor: { type: "member", id: "usr_1" },
    action: "agent.update",
    target: { type: "agent", id: "agt_1" },
    ip: "127.0.0.1",
    requestId: "req_1",
    changes: null,
    ...extra,
  };
}

describe("the audit log's queries", () => {
  it("asks for the newest first, with only the filters that are set, trimmed, and times in UTC", () => {
    const query = pageQuery(
      {
        ...NO_FILTERS,
        actorType: "key",
        action: " agent.update ",
        targetId: "",
        since: "2026-11-29T05:00",
      },
      null,
    );
    expect(query).toEqual({
      actorType: "key",
      actorId: undefined,
      action: "agent.update",
      targetType: undefined,
      targetId: undefined,
      since: new Date("2026-11-29T05:00").toISOString(),
      until: undefined,
      order: "desc",
      limit: 20,
    });
    expect(pageQuery(NO_FILTERS, { before: "aud_9" })).toMatchObject({ before: "aud_9", order: "desc" });
  });

  it("exports what the filters match, without a page's cursor or size", () => {
    expect(exportUrl(NO_FILTERS)).toBe("/v1/audit-events/export");
    expect(exportUrl({ ...NO_FILTERS, targetType: "agent", targetId: "agt_1", until: "not a date" })).toBe(
      "/v1/audit-events/export?targetType=agent&targetId=agt_1",
    );
  });
});

describe("the pages beside the one shown", () => {
  const page = [event("aud_5"), event("aud_4")];

  it("the first page leads only to older events, and only when there are more", () => {
    expect(neighbours(null, page, true)).toEqual({ newer: null, older: { before: "aud_4" } });
    expect(neighbours(null, page, false)).toEqual({ newer: null, older: null });
  });

  it("a page of older events leads back to newer ones, and on while there are more", () => {
    expect(neighbours({ before: "aud_6" }, page, true)).toEqual({
      newer: { after: "aud_5" },
      older: { before: "aud_4" },
    });
    expect(neighbours({ before: "aud_6" }, page, false)).toEqual({ newer: { after: "aud_5" }, older: null });
  });

  it("a page of newer events leads back to older ones, and to newer while there are more", () => {
    expect(neighbours({ after: "aud_3" }, page, true)).toEqual({
      newer: { after: "aud_5" },
      older: { before: "aud_4" },
    });
    expect(neighbours({ after: "aud_3" }, page, false)).toEqual({ newer: null, older: { before: "aud_4" } });
  });

  it("an empty page leads back the way it came", () => {
    expect(neighbours({ before: "aud_1" }, [], false)).toEqual({ newer: { after: "aud_1" }, older: null });
    expect(neighbours({ after: "aud_9" }, [], false)).toEqual({ newer: null, older: { before: "aud_9" } });
  });
});

describe("an event in words", () => {
  it("lists its changes by field, as JSON, saying when a side was not set", () => {
    expect(
      changeRows({
        name: { from: "Ada", to: "Ada Lovelace" },
        bio: { to: ["Counts."] },
        model: { from: null },
      }),
    ).toEqual([
      { field: "bio", from: "(not set)", to: '["Counts."]' },
      { field: "model", from: "null", to: "(not set)" },
      { field: "name", from: '"Ada"', to: '"Ada Lovelace"' },
    ]);
    expect(changeRows(null)).toEqual([]);
  });

  it("names the actor by email where it is known", () => {
    const emails = new Map([["usr_1", "ada@example.com"]]);
    expect(actorWords({ type: "member", id: "usr_1" }, emails)).toBe("ada@example.com");
    expect(actorWords({ type: "member", id: "usr_2" }, emails)).toBe("member usr_2");
    expect(actorWords({ type: "key", id: "key_1" }, emails)).toBe("key key_1");
    expect(actorWords({ type: "cli", id: null }, emails)).toBe("the admin CLI");
  });
});

async function until(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

describe("the audit page", () => {
  it("lists a page newest first, expands an event's changes, pages on with the last id and exports", async () => {
    const asked: string[] = [];
    vi.stubGlobal("fetch", async (url: string) => {
      asked.push(url);
      const path = new URL(url, "http://console.test");
      if (path.pathname === "/v1/members") {
        const members = [{ id: "usr_1", email: "ada@example.com", name: "Ada", role: "owner" }];
        return Response.json({ success: true, data: members, pagination: { limit: 100, hasMore: false } });
      }
      const first = !path.searchParams.has("before");
      const data = first
        ? [
            event("aud_2", { changes: { name: { from: "Ada", to: "Ada Lovelace" } } }),
            event("aud_1", { action: "agent.create", actor: { type: "key", id: "key_1" } }),
          ]
        : [event("aud_0", { action: "member.create", actor: { type: "cli", id: null } })];
      return Response.json({ success: true, data, pagination: { limit: 20, hasMore: first } });
    });
    const root = document.createElement("div");
    document.body.append(root);
    render(<AuditPage />, root);
    await until(() => root.querySelectorAll("tbody tr").length === 2);
    expect(asked).toContain("/v1/audit-events?order=desc&limit=20");
    const rows = [...root.querySelectorAll("tbody tr")].map((row) => row.textContent);
    expect(rows[0]).toContain("agent.update");
    expect(rows[1]).toContain("key key_1");
    // The acting member by email, once the members are read.
    await until(() => root.querySelector("tbody tr")!.textContent!.includes("ada@example.com"));

    const show = root.querySelector<HTMLButtonElement>("button[aria-expanded]")!;
    expect(show.getAttribute("aria-expanded")).toBe("false");
    show.click();
    await until(() => root.querySelector("tr.changes") !== null);
    expect(root.querySelector("tr.changes")!.textContent).toContain('"Ada Lovelace"');
    expect(show.getAttribute("aria-expanded")).toBe("true");

    const link = root.querySelector<HTMLAnchorElement>("a[download]")!;
    expect(link.textContent).toBe("Export NDJSON");
    expect(link.getAttribute("href")).toBe("/v1/audit-events/export");

    const next = [...root.querySelectorAll("button")].find((b) => b.textContent === "Next page")!;
    next.click();
    await until(() => root.textContent!.includes("member.create"));
    expect(asked).toContain("/v1/audit-events?order=desc&limit=20&before=aud_1");
    expect(root.textContent).toContain("the admin CLI");
    const previous = [...root.querySelectorAll("button")].find((b) => b.textContent === "Previous page")!;
    expect(previous.disabled).toBe(false);
  });
});

describe("the audit page refused", () => {
  it("shows the API's words, no endless loading and no export that would be refused too", async () => {
    vi.stubGlobal("fetch", async () =>
      Response.json(
        {
          success: false,
          error: {
            code: "FORBIDDEN",
            message: "Your role 'viewer' does not allow this operation: it needs the 'audit:read' scope.",
          },
        },
        { status: 403 },
      ),
    );
    const root = document.createElement("div");
    document.body.append(root);
    render(<AuditPage />, root);
    await until(() => root.querySelector('[role="alert"]') !== null);
    expect(root.querySelector('[role="alert"]')!.textContent).toContain("it needs the 'audit:read' scope");
    expect(root.querySelector('[aria-busy="true"]')).toBeNull();
    expect(root.querySelector("a[download]")).toBeNull();
  });
});
