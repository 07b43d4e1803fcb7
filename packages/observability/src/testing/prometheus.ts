/**
 * The value of one sample in a Prometheus text exposition: the metric `name` whose labels include every pair
 * of `labels`, summed over the series that match. 0 when none does (a counter not incremented yet).
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const present: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) present[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) sum += Number(match[3]);
  }
  return sum;
}

/** Fetches `${url}/metrics` and returns its text. */
export async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  if (!response.ok) throw new Error(`scrape failed: ${response.status}`);
  return response.text();
}
