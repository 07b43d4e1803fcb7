/** Plain-text output helpers: aligned tables and compact times. */

/** Columns padded to their widest cell, two spaces apart; no trailing spaces. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** `2026-11-22T10:04:05Z`: second precision reads better in a table; `-` for none. */
export function formatTime(iso: string | null): string {
  if (iso === null) return "-";
  return iso.replace(/\.\d+Z$/, "Z");
}

/** `key   value` lines with the keys aligned. */
export function renderFields(fields: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...fields.map(([key]) => key.length));
  return fields.map(([key, value]) => `${key.padEnd(width)}  ${value}`);
}
