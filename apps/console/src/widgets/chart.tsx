import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface Series {
  label: string;
  values: (number | null)[];
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
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 280,
        scales: { x: { time: true } },
        axes: [axis, axis],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLORS[i % COLORS.length]!,
            width: 2,
            spanGaps: true,
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
