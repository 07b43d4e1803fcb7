import { slackifyMarkdown } from "slackify-markdown";

/**
 * Markdown (what models write) as Slack's mrkdwn, by slackify-markdown (`**b**` → `*b*`, `[t](u)` → `<u|t>`,
 * headings bold, lists bulleted, `&`, `<`, `>` escaped). Undefined when the conversion fails or loses the text, in
 * which case the reply goes out as written: Slack shows plain text as it is.
 */
export function markdownToSlack(markdown: string): string | undefined {
  try {
    const converted = slackifyMarkdown(markdown).trim();
    return converted.length > 0 || markdown.trim().length === 0 ? converted : undefined;
  } catch {
    return undefined;
  }
}
