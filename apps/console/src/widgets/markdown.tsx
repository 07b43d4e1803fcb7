import type { ComponentChildren, JSX } from "preact";

/**
 * A small, safe subset of Markdown for replies: fenced code blocks, headings, bullet and numbered lists,
 * paragraphs, and inline code, bold, italics and http(s) links. Text is never parsed as HTML: every piece
 * becomes an element or a text node, so a reply cannot inject markup. An unclosed fence (a reply still
 * streaming) renders as a code block so far.
 */
export function Markdown({ text }: { text: string }): JSX.Element {
  return <div class="markdown">{blocks(text)}</div>;
}

type Block =
  | { kind: "code"; lang: string; text: string }
  | { kind: "heading"; level: number; text: string }
  | { kind: "list"; ordered: boolean; items: string[] }
  | { kind: "paragraph"; text: string };

export function parseBlocks(text: string): Block[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push({ kind: "paragraph", text: paragraph.join("\n") });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      i++;
      while (i < lines.length && !new RegExp(`^\\s*${fence[1]}\\s*$`).test(lines[i]!)) body.push(lines[i++]!);
      out.push({ kind: "code", lang: fence[2] ?? "", text: body.join("\n") });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      out.push({ kind: "heading", level: heading[1]!.length, text: heading[2]! });
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      const ordered = item[2] !== undefined;
      const last = out.at(-1);
      if (last?.kind === "list" && last.ordered === ordered) last.items.push(item[3]!);
      else out.push({ kind: "list", ordered, items: [item[3]!] });
      continue;
    }
    if (line.trim() === "") flush();
    else paragraph.push(line);
  }
  flush();
  return out;
}

function blocks(text: string): ComponentChildren[] {
  return parseBlocks(text).map((block, index) => {
    switch (block.kind) {
      case "code":
        return (
          <pre key={index} class="code" data-lang={block.lang || undefined}>
            <code>{block.text}</code>
          </pre>
        );
      case "heading": {
        // Inside a reply, headings sit below the page's own: h4 to h6.
        const Tag = `h${Math.min(6, block.level + 3)}` as "h4";
        return <Tag key={index}>{inline(block.text)}</Tag>;
      }
      case "list": {
        const items = block.items.map((item, i) => <li key={i}>{inline(item)}</li>);
        return block.ordered ? <ol key={index}>{items}</ol> : <ul key={index}>{items}</ul>;
      }
      default:
        return <p key={index}>{inline(block.text)}</p>;
    }
  });
}

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|_[^_\n]+_)|(\[[^\]\n]+\]\(https?:\/\/[^\s)]+\))/;

/** Inline spans of one block's text. */
export function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let rest = text;
  let key = 0;
  while (rest.length > 0) {
    const match = INLINE.exec(rest);
    if (!match) {
      out.push(rest);
      break;
    }
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const [whole, code, bold, italic, link] = match;
    if (code) out.push(<code key={key++}>{code.slice(1, -1)}</code>);
    else if (bold) out.push(<strong key={key++}>{bold.slice(2, -2)}</strong>);
    else if (italic) out.push(<em key={key++}>{italic.slice(1, -1)}</em>);
    else if (link) {
      const [, label, href] = /^\[([^\]]+)\]\((.+)\)$/.exec(link)!;
      out.push(
        <a key={key++} href={href} rel="noopener noreferrer nofollow" target="_blank">
          {label}
        </a>,
      );
    }
    rest = rest.slice(match.index + whole.length);
  }
  return out;
}
