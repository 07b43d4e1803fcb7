import { describe, expect, it } from "vitest";
import { AgentryError, InternalServerError, Page } from "../src/index.js";
import { agent, apiError, clientWith, json, mockFetch, type SeenRequest } from "./helpers.js";

/** A listing of `total` agents named a1, a2, ... served page by page as the gateway does. */
function listing(total: number) {
  return (request: SeenRequest) => {
    const page = Number(request.url.searchParams.get("page") ?? 1);
    const limit = Number(request.url.searchParams.get("limit") ?? 20);
    const names = Array.from({ length: total }, (_, i) => `a${i + 1}`).slice(
      (page - 1) * limit,
      page * limit,
    );
    const totalPages = Math.ceil(total / limit);
    return json(200, {
      success: true,
      data: names.map((name) => agent({ id: `agt_${name}`, name })),
      pagination: { page, limit, total, totalPages, hasMore: page < totalPages },
    });
  };
}

describe("agents.list", () => {
  it("awaited, gives one page with its pagination and the query as sent", async () => {
    const { fetch, requests } = mockFetch(listing(5));
    const page = await clientWith(fetch).agents.list({
      limit: 2,
      status: "active",
      sortBy: "name",
      order: "asc",
    });
    expect(page).toBeInstanceOf(Page);
    expect(page.data.map((a) => a.name)).toEqual(["a1", "a2"]);
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3, hasMore: true });
    expect(page.hasNextPage()).toBe(true);
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
      limit: "2",
      status: "active",
      sortBy: "name",
      order: "asc",
    });
  });

  it("sends no query parameters the caller did not give", async () => {
    const { fetch, requests } = mockFetch(listing(1));
    await clientWith(fetch).agents.list();
    expect(requests[0]!.url.search).toBe("");
  });

  it("iterated, walks every agent of every page, fetching pages only as needed", async () => {
    const { fetch, requests } = mockFetch(listing(5));
    const names: string[] = [];
    for await (const item of clientWith(fetch).agents.list({ limit: 2 })) names.push(item.name);
    expect(names).toEqual(["a1", "a2", "a3", "a4", "a5"]);
    expect(requests.map((r) => r.url.searchParams.get("page"))).toEqual([null, "2", "3"]);

    const lazy = mockFetch(listing(5));
    for await (const item of clientWith(lazy.fetch).agents.list({ limit: 2 })) {
      expect(item.name).toBe("a1");
      break;
    }
    expect(lazy.requests).toHaveLength(1);
  });

  it("starts from the page asked for", async () => {
    const { fetch } = mockFetch(listing(5));
    const names: string[] = [];
    for await (const item of clientWith(fetch).agents.list({ limit: 2, page: 2 })) names.push(item.name);
    expect(names).toEqual(["a3", "a4", "a5"]);
  });

  it("nextPage() and iterPages() go page by page, then stop", async () => {
    const { fetch } = mockFetch(listing(3));
    const first = await clientWith(fetch).agents.list({ limit: 2 });
    const second = await first.nextPage();
    expect(second.data.map((a) => a.name)).toEqual(["a3"]);
    expect(second.hasNextPage()).toBe(false);
    await expect(second.nextPage()).rejects.toBeInstanceOf(AgentryError);
    const pages: number[] = [];
    for await (const page of first.iterPages()) pages.push(page.pagination.page);
    expect(pages).toEqual([1, 2]);
  });

  it("an empty listing iterates nothing", async () => {
    const { fetch, requests } = mockFetch(listing(0));
    const items = [];
    for await (const item of clientWith(fetch).agents.list()) items.push(item);
    expect(items).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it("is lazy: nothing is sent until it is awaited or iterated", async () => {
    const { fetch, requests } = mockFetch(listing(1));
    const pending = clientWith(fetch).agents.list();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(requests).toHaveLength(0);
    await pending;
    await pending;
    expect(requests).toHaveLength(1);
  });

  it("a failing later page fails the loop, after the items before it", async () => {
    const serve = listing(5);
    const { fetch } = mockFetch(serve, () => apiError(500, "INTERNAL_ERROR"));
    const names: string[] = [];
    const loop = (async () => {
      for await (const item of clientWith(fetch, { maxRetries: 0 }).agents.list({ limit: 2 }))
        names.push(item.name);
    })();
    await expect(loop).rejects.toBeInstanceOf(InternalServerError);
    expect(names).toEqual(["a1", "a2"]);
  });

  it("catch() and finally() work as on a promise", async () => {
    const { fetch } = mockFetch(() =>
      apiError(400, "INVALID_REQUEST", { details: [{ field: "limit", issue: "too big" }] }),
    );
    let finished = false;
    const caught = await clientWith(fetch)
      .agents.list({ limit: 101 })
      .finally(() => {
        finished = true;
      })
      .catch((error: unknown) => (error as { details: unknown }).details);
    expect(caught).toEqual([{ field: "limit", issue: "too big" }]);
    expect(finished).toBe(true);
  });
});
