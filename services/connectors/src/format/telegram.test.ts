import { describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "./telegram.js";

describe("markdownToTelegramHtml", () => {
  it("turns Markdown emphasis, code and links into Telegram's tags", () => {
    expect(
      markdownToTelegramHtml("**bold**, _it_, ~~gone~~, `x = 1` and [docs](https://example.com/a?b=1&c=2)"),
    ).toBe(
      '<b>bold</b>, <i>it</i>, <s>gone</s>, <code>x = 1</code> and <a href="https://example.com/a?b=1&amp;c=2">docs</a>',
    );
  });

  it("escapes what would read as markup, in text and in code alike", () => {
    expect(markdownToTelegramHtml('5 > 3 & 2 < 4, <b>not a tag</b> "quoted"')).toBe(
      "5 &gt; 3 &amp; 2 &lt; 4, &lt;b&gt;not a tag&lt;/b&gt; &quot;quoted&quot;",
    );
    expect(markdownToTelegramHtml("`a<b && c`")).toBe("<code>a&lt;b &amp;&amp; c</code>");
    expect(markdownToTelegramHtml("```ts\nif (a < b) {}\n```")).toBe(
      '<pre><code class="language-ts">if (a &lt; b) {}</code></pre>',
    );
  });

  it("renders blocks Telegram has no tag for as text it shows well", () => {
    expect(markdownToTelegramHtml("# Title\n\n- one\n- **two**\n  - inner\n\n1. first\n2. second")).toBe(
      "<b>Title</b>\n\n• one\n• <b>two</b>\n  • inner\n\n1. first\n2. second",
    );
    expect(markdownToTelegramHtml("> said *so*")).toBe("<blockquote>said <i>so</i></blockquote>");
    // A rule shows no longer than its Markdown, so a reply split to the limit stays within it.
    expect(markdownToTelegramHtml("above\n\n---\n\nbelow")).toBe("above\n\n———\n\nbelow");
    expect(markdownToTelegramHtml("| a | b |\n|---|---|\n| 1 | 2 |")).toBe(
      "<pre>| a | b |\n|---|---|\n| 1 | 2 |</pre>",
    );
  });

  it("keeps plain text as it is and drops links Telegram cannot open", () => {
    expect(markdownToTelegramHtml("Hello from the agent.")).toBe("Hello from the agent.");
    expect(markdownToTelegramHtml("[click](javascript:alert(1)) \\*literal\\*")).toBe("click *literal*");
  });
});
