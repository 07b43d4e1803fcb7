// @vitest-environment happy-dom
import { render } from "preact";
import { describe, expect, it } from "vitest";
import { Markdown, parseBlocks } from "./markdown";

function html(text: string): HTMLElement {
  const root = document.createElement("div");
  render(<Markdown text={text} />, root);
  return root;
}

describe("Markdown", () => {
  it("renders code blocks, headings, lists and inline spans", () => {
    const root = html(
      "# Title\n\nSome **bold**, *soft* and `code`.\n\n- one\n- two\n\n1. first\n\n```ts\nconst a = 1;\n```",
    );
    expect(root.querySelector("h4")?.textContent).toBe("Title");
    expect(root.querySelector("strong")?.textContent).toBe("bold");
    expect(root.querySelector("em")?.textContent).toBe("soft");
    expect(root.querySelector("p code")?.textContent).toBe("code");
    expect([...root.querySelectorAll("ul li")].map((li) => li.textContent)).toEqual(["one", "two"]);
    expect(root.querySelector("ol li")?.textContent).toBe("first");
    const pre = root.querySelector("pre");
    expect(pre?.dataset.lang).toBe("ts");
    expect(pre?.textContent).toBe("const a = 1;");
  });

  it("never turns text into markup", () => {
    const root = html('<img src=x onerror="alert(1)"> and <script>alert(2)</script>');
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelector("script")).toBeNull();
    expect(root.textContent).toContain("<img src=x");
  });

  it("links only http(s) addresses, opened safely", () => {
    const root = html("[site](https://example.com) and [bad](javascript:alert(1))");
    const links = root.querySelectorAll("a");
    expect(links).toHaveLength(1);
    expect(links[0]?.getAttribute("href")).toBe("https://example.com");
    expect(links[0]?.getAttribute("rel")).toContain("noopener");
  });

  it("shows a fence still streaming as a code block so far", () => {
    expect(parseBlocks("Look:\n```js\nlet x")).toEqual([
      { kind: "paragraph", text: "Look:" },
      { kind: "code", lang: "js", text: "let x" },
    ]);
  });
});
