import { describe, expect, it } from "vitest";
import { clientWarnings, namesRunPlatform } from "./clients.js";

describe("clientWarnings", () => {
  it("warns of a platform no connector runs whether or not the secrets are known, at the item's path", () => {
    for (const secrets of [undefined, new Set<string>()]) {
      expect(clientWarnings(["twitter", { type: "farcaster" }], secrets, "settings.agentry.clients")).toEqual(
        [
          {
            field: "settings.agentry.clients[0]",
            issue: expect.stringMatching(/^"twitter" is kept but not run/),
          },
          {
            field: "settings.agentry.clients[1]",
            issue: expect.stringMatching(/^"farcaster" is kept but not run/),
          },
        ],
      );
    }
  });

  it("warns of a run platform's missing secrets only when the secrets are known", () => {
    expect(clientWarnings(["telegram", "slack"], undefined)).toEqual([]);
    expect(clientWarnings(["telegram", "slack"], new Set(["TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN"]))).toEqual(
      [
        {
          field: "clients[1]",
          issue: expect.stringContaining(
            "set the agent secret SLACK_SIGNING_SECRET (PUT /v1/agents/{agentId}/secrets/SLACK_SIGNING_SECRET)",
          ),
        },
      ],
    );
    expect(
      clientWarnings(
        ["telegram", { type: "discord" }, "slack"],
        new Set(["TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]),
      ),
    ).toEqual([]);
  });

  it("skips items without a platform name, and anything but a list", () => {
    expect(clientWarnings([42, null, { respondIn: "all" }], new Set())).toEqual([]);
    expect(clientWarnings(null, new Set())).toEqual([]);
  });
});

describe("namesRunPlatform", () => {
  it("is whether any item names telegram, discord or slack", () => {
    expect(namesRunPlatform(["twitter", { type: "slack" }])).toBe(true);
    expect(namesRunPlatform(["twitter"])).toBe(false);
    expect(namesRunPlatform(undefined)).toBe(false);
  });
});
