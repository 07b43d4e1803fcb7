import { describe, expect, it } from "vitest";
import { markdownToSlack } from "./slack.js";

describe("markdownToSlack", () => {
  it("turns Markdown into Slack's mrkdwn", () => {
    const converted =
      markdownToSlack("# Plan\n\n**bold** and _it_ and [docs](https://example.com)\n\n- a\n- b") ?? "";
    // slackify-markdown puts zero-width spaces around emphasis so Slack sees it mid-word too.
    const visible = converted.replaceAll("\u200b", "");
    expect(visible).toBe("*Plan*\n\n*bold* and _it_ and <https://example.com|docs>\n\n•   a\n•   b");
  });

  it("escapes the characters Slack reads as markup", () => {
    expect(markdownToSlack("Tom & Jerry < 3")).toBe("Tom &amp; Jerry &lt; 3");
  });

  it("keeps plain text as it is", () => {
    expect(markdownToSlack("Hello from the agent.")).toBe("Hello from the agent.");
  });
});
