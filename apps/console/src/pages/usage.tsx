import type { Agent, UsageFigures, UsageGroup, UsageReport } from "@agentry/sdk";
import { useEffect, useId, useMemo, useState } from "preact/hooks";
import { allAgents } from "../agents-api";
import { api } from "../api";
import { TimeChart } from "../widgets/chart";
import { ErrorMessage, TableScroll, useAction } from "../widgets/common";

const METRICS = {
  messages: { label: "Messages", value: (s: UsageFigures) => s.messages },
  totalTokens: { label: "Tokens", value: (s: UsageFigures) => s.totalTokens },
  p50: { label: "Latency p50 (ms)", value: (s: UsageFigures) => s.latencyMs?.p50 ?? null },
  p95: { label: "Latency p95 (ms)", value: (s: UsageFigures) => s.latencyMs?.p95 ?? null },
} as const;
type Metric = keyof typeof METRICS;
type GroupBy = "" | "agentId" | "model" | "apiKeyId";

const milliseconds = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : `${Math.round(value)} ms`;

const dayInput = (date: Date) => date.toISOString().slice(0, 10);

/** The chart's series: one per group (agent, model or key), or one for everything. */
export function seriesOf(
  usage: UsageReport,
  metric: Metric,
  groupBy: GroupBy,
  names: Record<string, string>,
) {
  const times = usage.buckets.map((bucket) => Date.parse(bucket.start) / 1000);
  const keys = new Set<string>();
  for (const bucket of usage.buckets)
    for (const group of bucket.groups) keys.add(groupBy ? String(group[groupBy] ?? "") : "");
  if (keys.size === 0) keys.add("");
  const series = [...keys].map((key) => ({
    label: groupBy ? (names[key] ?? (key || "(none)")) : METRICS[metric].label,
    values: usage.buckets.map((bucket) => {
      const group = bucket.groups.find((g) => (groupBy ? String(g[groupBy] ?? "") : "") === key);
      return group
        ? METRICS[metric].value(group)
        : metric === "messages" || metric === "totalTokens"
          ? 0
          : null;
    }),
  }));
  return { times, series };
}

/** Usage: messages, tokens and latency by hour or day, grouped by agent, model or key. */
export function UsagePage() {
  const id = useId();
  const now = new Date();
  const [from, setFrom] = useState(dayInput(new Date(now.getTime() - 6 * 86_400_000)));
  const [to, setTo] = useState(dayInput(now));
  const [granularity, setGranularity] = useState<"hour" | "day">("day");
  const [groupBy, setGroupBy] = useState<GroupBy>("");
  const [metric, setMetric] = useState<Metric>("messages");
  const [usage, setUsage] = useState<UsageReport | null>(null);
  const [agents, setAgents] = useState<Agent[]>([]);
  const load = useAction(async () => {
    const end = new Date(`${to}T00:00:00Z`);
    end.setUTCDate(end.getUTCDate() + 1);
    const { data } = await api<UsageReport>("GET", "/v1/usage", {
      query: { from: `${from}T00:00:00Z`, to: end.toISOString(), granularity, groupBy },
    });
    setUsage(data);
  });
  useEffect(() => {
    void load.run();
  }, [from, to, granularity, groupBy]);
  useEffect(() => {
    allAgents().then(setAgents, () => undefined);
  }, []);

  const names = useMemo(() => Object.fromEntries(agents.map((agent) => [agent.id, agent.name])), [agents]);
  const chart = useMemo(
    () => (usage ? seriesOf(usage, metric, groupBy, names) : null),
    [usage, metric, groupBy, names],
  );
  const totals: UsageGroup[] = usage ? (groupBy ? (usage.totals.groups ?? []) : [usage.totals]) : [];

  return (
    <>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label for={`${id}-from`}>From</label>
        <input id={`${id}-from`} type="date" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
        <label for={`${id}-to`}>To</label>
        <input id={`${id}-to`} type="date" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
        <label for={`${id}-granularity`}>By</label>
        <select
          id={`${id}-granularity`}
          value={granularity}
          onChange={(e) => setGranularity(e.currentTarget.value as "hour" | "day")}
        >
          <option value="day">Day</option>
          <option value="hour">Hour</option>
        </select>
        <label for={`${id}-group`}>Group by</label>
        <select
          id={`${id}-group`}
          value={groupBy}
          onChange={(e) => setGroupBy(e.currentTarget.value as GroupBy)}
        >
          <option value="">Nothing</option>
          <option value="agentId">Agent</option>
          <option value="model">Model</option>
          <option value="apiKeyId">API key</option>
        </select>
        <label for={`${id}-metric`}>Show</label>
        <select
          id={`${id}-metric`}
          value={metric}
          onChange={(e) => setMetric(e.currentTarget.value as Metric)}
        >
          {Object.entries(METRICS).map(([key, value]) => (
            <option key={key} value={key}>
              {value.label}
            </option>
          ))}
        </select>
      </form>
      <ErrorMessage error={load.error} />
      {chart ? (
        <TimeChart
          times={chart.times}
          series={chart.series}
          summary={`${METRICS[metric].label} per ${granularity} from ${from} to ${to}${groupBy ? `, by ${groupBy}` : ""}`}
        />
      ) : load.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
      {usage ? (
        <TableScroll label="Usage totals">
          <table>
            <caption>Totals for the range</caption>
            <thead>
              <tr>
                {groupBy ? <th scope="col">{groupBy}</th> : null}
                <th scope="col">Messages</th>
                <th scope="col">Errors</th>
                <th scope="col">Input tokens</th>
                <th scope="col">Output tokens</th>
                <th scope="col">Latency p50</th>
                <th scope="col">Latency p95</th>
              </tr>
            </thead>
            <tbody>
              {totals.map((row, index) => (
                <tr key={index}>
                  {groupBy ? (
                    <td>{names[String(row[groupBy])] ?? String(row[groupBy] ?? "(none)")}</td>
                  ) : null}
                  <td>{row.messages}</td>
                  <td>{row.errors}</td>
                  <td>{row.inputTokens}</td>
                  <td>{row.outputTokens}</td>
                  <td>{milliseconds(row.latencyMs?.p50)}</td>
                  <td>{milliseconds(row.latencyMs?.p95)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
    </>
  );
}
