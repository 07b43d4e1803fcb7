import type { Agent, ApiKey, Budget, BudgetPeriod, BudgetUnit } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { allAgents } from "../agents-api";
import { api } from "../api";
import { ConfirmButton, ErrorMessage, Field, formatTime, TableScroll, useAction } from "../widgets/common";

const PERIOD_WORDS: Record<BudgetPeriod, string> = { day: "per UTC day", month: "per UTC month" };

/** An amount in a budget's unit, in words. */
function amountOf(unit: BudgetUnit, amount: number): string {
  if (unit === "usd")
    return `$${amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;
  return `${amount.toLocaleString("en-US")} tokens`;
}

/** What a budget counts, in words: the account's messages, one agent's or one key's. */
function scopeOf(budget: Budget, agents: Map<string, string>, keys: Map<string, string>): string {
  if (budget.agentId) return `Agent ${agents.get(budget.agentId) ?? budget.agentId}`;
  if (budget.apiKeyId) return `Key ${keys.get(budget.apiKeyId) ?? budget.apiKeyId}`;
  return "Account";
}

/**
 * Budgets: what the account, an agent or a key may spend per day or month, in tokens or dollars, each with its
 * spend this period; create, change a limit or period, delete.
 */
export function BudgetsPage() {
  const [budgets, setBudgets] = useState<Budget[] | null>(null);
  const [agents, setAgents] = useState<Agent[]>([]);
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [notice, setNotice] = useState("");
  const [editing, setEditing] = useState<string | null>(null);
  const load = useAction(async () => {
    setBudgets((await api<Budget[]>("GET", "/v1/budgets")).data);
  });
  useEffect(() => {
    void load.run();
    // The pickers and the names in the list; without them the list shows ids.
    allAgents().then(setAgents, () => undefined);
    api<ApiKey[]>("GET", "/v1/api-keys").then(
      ({ data }) => setKeys(data),
      () => undefined,
    );
  }, []);
  const agentNames = new Map(agents.map((agent) => [agent.id, agent.name]));
  const keyNames = new Map(keys.map((key) => [key.id, key.name || key.prefix]));

  return (
    <>
      <p class="muted">
        A budget stops messages once the account, an agent or a key has spent its limit for the UTC day or
        month. Messages it would pass are refused with 402 until it resets or its limit is raised.
      </p>
      <CreateBudget
        agents={agents}
        keys={keys}
        onCreated={(budget) => {
          setNotice(`Budget created: ${amountOf(budget.unit, budget.limit)} ${PERIOD_WORDS[budget.period]}.`);
          void load.run();
        }}
      />
      <h2>Budgets</h2>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error} />
      {budgets === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : budgets.length === 0 ? (
        <p>No budgets yet: messages are limited only by rate limits.</p>
      ) : (
        <TableScroll label="Budgets">
          <table>
            <caption class="visually-hidden">Budgets</caption>
            <thead>
              <tr>
                <th scope="col">Counts</th>
                <th scope="col">Limit</th>
                <th scope="col">Spent this period</th>
                <th scope="col">Resets</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {budgets.map((budget) => {
                const scope = scopeOf(budget, agentNames, keyNames);
                return (
                  <tr key={budget.id} data-budget={budget.id}>
                    <td>
                      {scope} <span class="muted">({budget.unit})</span>
                    </td>
                    <td>
                      {editing === budget.id ? (
                        <EditBudget
                          budget={budget}
                          scope={scope}
                          onDone={(updated) => {
                            setEditing(null);
                            if (updated) {
                              setNotice(
                                `Budget of ${scope} is now ${amountOf(updated.unit, updated.limit)} ${PERIOD_WORDS[updated.period]}.`,
                              );
                              void load.run();
                            }
                          }}
                        />
                      ) : (
                        <>
                          {amountOf(budget.unit, budget.limit)} {PERIOD_WORDS[budget.period]}
                        </>
                      )}
                    </td>
                    <td>
                      <meter
                        class="spend"
                        min={0}
                        max={100}
                        low={50}
                        high={80}
                        optimum={0}
                        value={Math.min(100, budget.spend.percent)}
                        aria-label={`Spend of ${scope}`}
                      />{" "}
                      {budget.spend.percent}% · {amountOf(budget.unit, budget.spend.spent)} spent,{" "}
                      {amountOf(budget.unit, budget.spend.remaining)} left
                    </td>
                    <td>{formatTime(budget.spend.resetsAt)}</td>
                    <td class="actions">
                      {editing === budget.id ? null : (
                        <button type="button" onClick={() => setEditing(budget.id)}>
                          Edit<span class="visually-hidden"> budget of {scope}</span>
                        </button>
                      )}
                      <ConfirmButton
                        label={
                          <>
                            Delete<span class="visually-hidden"> budget of {scope}</span>
                          </>
                        }
                        title="Delete this budget?"
                        message={
                          <p>
                            {scope}'s messages will no longer be stopped at{" "}
                            {amountOf(budget.unit, budget.limit)} {PERIOD_WORDS[budget.period]}.
                          </p>
                        }
                        confirmLabel="Delete budget"
                        onConfirm={async () => {
                          await api("DELETE", `/v1/budgets/${budget.id}`);
                          setNotice(`Budget of ${scope} deleted.`);
                          await load.run();
                        }}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}

/** A budget's limit and period, changed in its row; its unit and what it counts stay. */
function EditBudget({
  budget,
  scope,
  onDone,
}: {
  budget: Budget;
  scope: string;
  onDone: (updated: Budget | null) => void;
}) {
  const id = useId();
  const [limit, setLimit] = useState(String(budget.limit));
  const [period, setPeriod] = useState<BudgetPeriod>(budget.period);
  const save = useAction(async () => {
    const { data } = await api<Budget>("PATCH", `/v1/budgets/${budget.id}`, {
      body: { limit: Number(limit), period },
    });
    onDone(data);
  });
  return (
    <form
      class="edit-budget"
      aria-label={`Edit the budget of ${scope}`}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <Field id={`${id}-limit`} label={budget.unit === "usd" ? "Limit (US dollars)" : "Limit (tokens)"}>
        <input
          id={`${id}-limit`}
          type="number"
          required
          min={budget.unit === "usd" ? 0.01 : 1}
          step="any"
          value={limit}
          onInput={(e) => setLimit(e.currentTarget.value)}
        />
      </Field>
      <Field id={`${id}-period`} label="Period">
        <select
          id={`${id}-period`}
          value={period}
          onChange={(e) => setPeriod(e.currentTarget.value as BudgetPeriod)}
        >
          <option value="day">Day</option>
          <option value="month">Month</option>
        </select>
      </Field>
      <ErrorMessage error={save.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          Save
        </button>
        <button type="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

type Counts = "account" | "agent" | "key";

function CreateBudget({
  agents,
  keys,
  onCreated,
}: {
  agents: Agent[];
  keys: ApiKey[];
  onCreated: (budget: Budget) => void;
}) {
  const id = useId();
  const [unit, setUnit] = useState<BudgetUnit>("tokens");
  const [limit, setLimit] = useState("");
  const [period, setPeriod] = useState<BudgetPeriod>("day");
  const [counts, setCounts] = useState<Counts>("account");
  const [agentId, setAgentId] = useState("");
  const [apiKeyId, setApiKeyId] = useState("");
  const create = useAction(async () => {
    const body: Record<string, unknown> = { unit, limit: Number(limit), period };
    // An empty picker is sent as it is, so the API says which one to choose.
    if (counts === "agent") body.agentId = agentId;
    if (counts === "key") body.apiKeyId = apiKeyId;
    const { data } = await api<Budget>("POST", "/v1/budgets", { body });
    setLimit("");
    onCreated(data);
  });
  return (
    <form
      class="card"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id={`${id}-title`}>New budget</h2>
      <Field id={`${id}-counts`} label="Counts the messages of">
        <select
          id={`${id}-counts`}
          value={counts}
          onChange={(e) => setCounts(e.currentTarget.value as Counts)}
        >
          <option value="account">The whole account</option>
          <option value="agent">One agent</option>
          <option value="key">One API key</option>
        </select>
      </Field>
      {counts === "agent" ? (
        <Field id={`${id}-agent`} label="Agent">
          <select
            id={`${id}-agent`}
            value={agentId}
            required
            onChange={(e) => setAgentId(e.currentTarget.value)}
          >
            <option value="">{agents.length === 0 ? "No agents yet" : "Choose an agent"}</option>
            {agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
        </Field>
      ) : null}
      {counts === "key" ? (
        <Field id={`${id}-key`} label="API key">
          <select
            id={`${id}-key`}
            value={apiKeyId}
            required
            onChange={(e) => setApiKeyId(e.currentTarget.value)}
          >
            <option value="">{keys.length === 0 ? "No keys yet" : "Choose a key"}</option>
            {keys.map((key) => (
              <option key={key.id} value={key.id}>
                {key.name || key.prefix} ({key.prefix}…)
              </option>
            ))}
          </select>
        </Field>
      ) : null}
      <Field id={`${id}-unit`} label="Unit">
        <select id={`${id}-unit`} value={unit} onChange={(e) => setUnit(e.currentTarget.value as BudgetUnit)}>
          <option value="tokens">Tokens (input plus output)</option>
          <option value="usd">US dollars (at the server's prices)</option>
        </select>
      </Field>
      <Field
        id={`${id}-limit`}
        label="Limit"
        hint={unit === "usd" ? "US dollars, 0.01 to 10,000,000" : "A whole number of tokens, 1 to 10¹²"}
      >
        <input
          id={`${id}-limit`}
          type="number"
          required
          min={unit === "usd" ? 0.01 : 1}
          step="any"
          value={limit}
          aria-describedby={`${id}-limit-hint`}
          onInput={(e) => setLimit(e.currentTarget.value)}
        />
      </Field>
      <Field id={`${id}-period`} label="Period" hint="Periods start at 00:00 UTC (on the first, for months).">
        <select
          id={`${id}-period`}
          value={period}
          aria-describedby={`${id}-period-hint`}
          onChange={(e) => setPeriod(e.currentTarget.value as BudgetPeriod)}
        >
          <option value="day">Day</option>
          <option value="month">Month</option>
        </select>
      </Field>
      <ErrorMessage error={create.error} />
      <button type="submit" class="primary" disabled={create.busy}>
        Create budget
      </button>
    </form>
  );
}
