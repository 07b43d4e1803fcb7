import { lexer, type Token, type Tokens } from "marked";

/**
 * Markdown (what models write) as Telegram's HTML parse mode. HTML is the robust choice of Telegram's two formats:
 * only `<`, `>` and `&` need escaping, where MarkdownV2 rejects a message for any unescaped punctuation. Telegram
 * knows a handful of tags (b, i, s, code, pre, a, blockquote), so headings become bold lines, lists bullets, and
 * tables and raw HTML plain preformatted or escaped text; nothing the model writes can make the markup invalid.
 */
export function markdownToTelegramHtml(markdown: string): string {
  return blocks(lexer(markdown)).trim();
}

function blocks(tokens: readonly Token[], depth = 0): string {
  return tokens.map((token) => block(token, depth)).join("");
}

function block(token: Token, depth: number): string {
  switch (token.type) {
    case "heading":
      return `<b>${inline((token as Tokens.Heading).tokens)}</b>\n\n`;
    case "paragraph":
      return `${inline((token as Tokens.Paragraph).tokens)}\n\n`;
    case "text": {
      // A tight list item's text: its inline tokens, or the bare text.
      const text = token as Tokens.Text;
      return text.tokens ? inline(text.tokens) : escapeHtml(text.text);
    }
    case "code": {
      const code = token as Tokens.Code;
      const language = code.lang?.match(/^[\w+-]+/)?.[0];
      const open = language ? `<pre><code class="language-${language}">` : "<pre><code>";
      return `${open}${escapeHtml(code.text)}</code></pre>\n\n`;
    }
    case "blockquote":
      return `<blockquote>${blocks((token as Tokens.Blockquote).tokens, depth).trim()}</blockquote>\n\n`;
    case "list":
      return `${list(token as Tokens.List, depth)}${depth === 0 ? "\n" : ""}`;
    case "hr":
      // No longer than Markdown's own `---`: the reply was split to the limit before conversion.
      return "———\n\n";
    case "table":
      return `<pre>${escapeHtml(token.raw.trim())}</pre>\n\n`;
    case "space":
      return "";
    default:
      return escapeHtml(token.raw);
  }
}

function list(token: Tokens.List, depth: number): string {
  const indent = "  ".repeat(depth);
  const start = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, index) => {
      const marker = item.task ? (item.checked ? "☑" : "☐") : token.ordered ? `${start + index}.` : "•";
      const body = item.tokens
        .filter((child) => child.type !== "checkbox")
        .map((child) =>
          child.type === "list" ? `\n${list(child as Tokens.List, depth + 1)}` : block(child, depth + 1),
        )
        .join("")
        .trim();
      return `${indent}${marker} ${body}\n`;
    })
    .join("");
}

function inline(tokens: readonly Token[] | undefined): string {
  return (tokens ?? []).map(inlineToken).join("");
}

function inlineToken(token: Token): string {
  switch (token.type) {
    case "strong":
      return `<b>${inline((token as Tokens.Strong).tokens)}</b>`;
    case "em":
      return `<i>${inline((token as Tokens.Em).tokens)}</i>`;
    case "del":
      return `<s>${inline((token as Tokens.Del).tokens)}</s>`;
    case "codespan":
      return `<code>${escapeHtml(decodeEntities((token as Tokens.Codespan).text))}</code>`;
    case "link": {
      const link = token as Tokens.Link;
      // Only web links: Telegram refuses the message for an href it cannot open.
      if (!/^(https?|tg|mailto):/i.test(link.href)) return inline(link.tokens);
      return `<a href="${escapeHtml(link.href)}">${inline(link.tokens)}</a>`;
    }
    case "image": {
      const image = token as Tokens.Image;
      return /^https?:/i.test(image.href)
        ? `<a href="${escapeHtml(image.href)}">${escapeHtml(image.text || image.href)}</a>`
        : escapeHtml(image.text);
    }
    case "br":
      return "\n";
    case "text": {
      const text = token as Tokens.Text;
      return text.tokens ? inline(text.tokens) : escapeHtml(decodeEntities(text.text));
    }
    case "escape":
      return escapeHtml(decodeEntities((token as Tokens.Escape).text));
    default:
      return escapeHtml(token.raw);
  }
}

/** What Telegram's HTML mode requires escaped: `<`, `>`, `&`, and `"` inside an attribute. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** The lexer hands some text over with `&`, `<`, `>`, quotes already as entities; undone before escaping once. */
function decodeEntities(text: string): string {
  return text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
}
