import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface Series {
  label: string;
  values: (number | null)[];
}

/**
 * The indexes of values with no value on either side: a line through them draws nothing, and uPlot leaves out
 * points where they are dense, so light traffic (one message in a week of hours) would show as an empty chart.
 */
export function isolatedPoints(values: (number | null)[]): number[] | null {
  const isolated = values.flatMap((value, i) =>
    value !== null && (values[i - 1] ?? null) === null && (values[i + 1] ?? null) === null ? [i] : [],
  );
  return isolated.length > 0 ? isolated : null;
}

/** A y axis as wide as its longest label ("12,000" whole), measured in the axis's own font. */
function axisWidth(plot: uPlot, values: string[] | null, axisIndex: number, cycle: number): number {
  const axis = plot.axes[axisIndex]!;
  // uPlot sizes axes in rounds until they settle; after the first two the size is kept, so it always settles.
  if (cycle > 1) return (axis as { _size?: number })._size ?? 50;
  const longest = (values ?? []).reduce((a, b) => (b.length > a.length ? b : a), "");
  const font = Array.isArray(axis.font) ? axis.font[0] : axis.font;
  plot.ctx.font = typeof font === "string" ? font : "12px system-ui, sans-serif";
  const text = plot.ctx.measureText(longest).width / devicePixelRatio;
  const ticks = (axis.ticks as { size?: number } | undefined)?.size ?? 10;
  return Math.ceil(text + ticks + (axis.gap ?? 5) + 8);
}

const COLORS = ["#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626"];

/**
 * A time-series line chart (uPlot: small, fast, canvas-drawn). The canvas is hidden from assistive technology;
 * `summary` names what it shows, and the page shows the same numbers as a table.
 */
export function TimeChart({
  times,
  series,
  summary,
}: {
  times: number[];
  series: Series[];
  summary: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const dark = matchMedia("(prefers-color-scheme: dark)").matches;
    const ink = dark ? "#cbd5e1" : "#334155";
    const grid = dark ? "#334155" : "#e2e8f0";
    const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    const yAxis = { ...axis, size: axisWidth };
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 280,
        scales: { x: { time: true } },
        axes: [axis, yAxis],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLORS[i % COLORS.length]!,
            width: 2,
            spanGaps: true,
            points: { size: 8, filter: () => isolatedPoints(s.values) },
          })),
        ],
      },
      [times, ...series.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, element.clientWidth), height: 280 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series]);
  return (
    <figure class="chart">
      <div ref={box} role="img" aria-label={summary} />
      <figcaption class="visually-hidden">{summary}</figcaption>
    </figure>
  );
}
