import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { type ConsoleSession, type RateLimit, rateLimit, session, signedOut } from "./api";
import { type Draft, hasDraft, keepDraft, restoreDraft, takeDraft } from "./drafts";
import { AgentForm } from "./pages/agent-form";
import { AgentsPage } from "./pages/agents";
import { AuditPage } from "./pages/audit";
import { BudgetsPage } from "./pages/budgets";
import { ChatPage } from "./pages/chat";
import { HistoryPage } from "./pages/history";
import { KeysPage } from "./pages/keys";
import { MembersPage } from "./pages/members";
import { MemoriesPage } from "./pages/memories";
import { SignInPage } from "./pages/sign-in";
import { UsagePage } from "./pages/usage";
import { WebhooksPage } from "./pages/webhooks";
import { currentRoute, navigate, useRoute } from "./router";
import { ErrorMessage, Link } from "./widgets/common";

const NAV: { to: string; label: string }[] = [
  { to: "/agents", label: "Agents" },
  { to: "/chat", label: "Chat" },
  { to: "/history", label: "History" },
  { to: "/memories", label: "Memories" },
  { to: "/usage", label: "Usage" },
  { to: "/budgets", label: "Budgets" },
  { to: "/webhooks", label: "Webhooks" },
  { to: "/settings/api-keys", label: "API keys" },
  { to: "/settings/members", label: "Members" },
  { to: "/settings/audit", label: "Audit log" },
];

function page(path: string): { title: string; body: JSX.Element } {
  const edit = /^\/agents\/(agt_[0-9A-Z]+)\/edit$/.exec(path);
  if (edit) return { title: "Edit agent", body: <AgentForm agentId={edit[1]!} /> };
  switch (path) {
    case "/agents/new":
      return { title: "New agent", body: <AgentForm /> };
    case "/chat":
      return { title: "Chat", body: <ChatPage /> };
    case "/history":
      return { title: "History", body: <HistoryPage /> };
    case "/memories":
      return { title: "Memories", body: <MemoriesPage /> };
    case "/usage":
      return { title: "Usage", body: <UsagePage /> };
    case "/budgets":
      return { title: "Budgets", body: <BudgetsPage /> };
    case "/webhooks":
      return { title: "Webhooks", body: <WebhooksPage /> };
    case "/settings/api-keys":
      return { title: "API keys", body: <KeysPage /> };
    case "/settings/members":
      return { title: "Members", body: <MembersPage /> };
    case "/settings/audit":
      return { title: "Audit log", body: <AuditPage /> };
    default:
      return { title: "Agents", body: <AgentsPage /> };
  }
}

/** The other tabs of this console: a sign-out in one ends the session in all of them at once. */
const tabs = typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel("agentry-console");
const SIGNED_OUT = "signed-out";

/** What each rate-limit bucket counts, in the indicator's words. */
const BUCKET_WORDS: Record<string, string> = {
  requestsPerMinute: "requests",
  createPerMinute: "agent creations",
  listPerMinute: "listings",
  getPerMinute: "reads",
  updatePerMinute: "updates",
  deletePerMinute: "deletions",
  messagesPerMinute: "messages to this agent",
};

function RateLimitState() {
  const [state, setState] = useState<RateLimit | null>(rateLimit.value);
  useEffect(() => rateLimit.subscribe(setState), []);
  // Rendered before the first answer too, invisible, so that its arrival moves nothing on the page.
  const low = state !== null && state.remaining <= Math.max(1, Math.floor(state.limit / 10));
  const counted = BUCKET_WORDS[state?.bucket ?? "requestsPerMinute"] ?? state?.bucket ?? "requests";
  return (
    <p
      class={`rate ${low ? "low" : ""} ${state ? "" : "pending"}`}
      aria-live="polite"
      title={`The rate limit with the least left after the latest request: ${counted} this minute`}
    >
      <span class="visually-hidden">Rate limit: </span>
      <span class="count">{state ? `${state.remaining}/${state.limit}` : "0/0"}</span> {counted} left
    </p>
  );
}

export function App() {
  const route = useRoute();
  const [current, setCurrent] = useState<ConsoleSession | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [ended, setEnded] = useState<{ reason: string; draftKept: boolean } | null>(null);
  const [restoring, setRestoring] = useState<Draft | null>(null);
  /** The page whose form was put back, for as long as it is shown. */
  const [restored, setRestored] = useState<string | null>(null);
  const signedIn = useRef(false);
  signedIn.current = Boolean(current) && route.path !== "/sign-in";

  useEffect(() => {
    if (route.path === "/sign-in") return;
    session.current().then(
      ({ data }) => setCurrent(data),
      () => setCurrent(null),
    );
  }, [route.path === "/sign-in"]);
  useEffect(() => {
    // The page's form is kept before the sign-in page replaces it, and the reason is said.
    const end = (reason: string) => {
      if (signedIn.current) {
        const { path, query } = currentRoute();
        const search = query.toString();
        keepDraft(document.getElementById("main"), search ? `${path}?${search}` : path);
        setEnded({ reason, draftKept: hasDraft() });
      }
      setCurrent(null);
    };
    const unsubscribe = signedOut.subscribe((out) => {
      // A 401's own words may be about API keys, which a console user never had: the console says it its way.
      if (out)
        end(
          "Your session has ended: it expired, or it was signed out elsewhere. Sign in again with a new link.",
        );
    });
    const heard = (event: MessageEvent) => {
      if (event.data === SIGNED_OUT) end("You signed out in another tab. Sign in again with a new link.");
    };
    tabs?.addEventListener("message", heard);
    return () => {
      unsubscribe();
      tabs?.removeEventListener("message", heard);
    };
  }, []);
  useEffect(() => {
    const main = document.getElementById("main");
    if (!restoring || !current || !main) return;
    return restoreDraft(main, restoring, (count) => {
      setRestoring(null);
      if (count > 0) setRestored(currentRoute().path);
    });
  }, [restoring, current]);

  /** Back to the page a kept form was on, or to the agents. */
  const onSignedIn = (signedInAs: ConsoleSession) => {
    signedOut.set(false);
    setEnded(null);
    const draft = takeDraft();
    setCurrent(signedInAs);
    navigate(draft?.path ?? "/agents", { replace: true });
    setRestoring(draft);
  };

  const { title, body } = page(route.path);
  useEffect(() => {
    document.title = `${current === null || route.path === "/sign-in" ? "Sign in" : title} · Agentry console`;
  }, [title, current, route.path]);

  if (route.path === "/sign-in") {
    return <SignInPage onSignedIn={onSignedIn} ended={ended} />;
  }
  if (current === undefined) return <main class="loading" aria-busy="true" />;
  if (current === null) return <SignInPage onSignedIn={onSignedIn} ended={ended} />;

  const signOut = async () => {
    setError(null);
    try {
      await session.signOut();
      tabs?.postMessage(SIGNED_OUT);
      setCurrent(null);
      navigate("/sign-in", { replace: true });
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Agentry</span>
        <nav aria-label="Console">
          <ul>
            {NAV.map((item) => (
              <li key={item.to}>
                <Link
                  to={item.to}
                  aria-current={
                    route.path === item.to || (item.to === "/agents" && title.includes("agent"))
                      ? "page"
                      : undefined
                  }
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <RateLimitState />
          <span class="muted">{current.account.name}</span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <ErrorMessage error={error} />
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {restored === route.path ? (
          <p class="notice" role="status">
            The form you were filling in was restored from before your session ended; check it and save it.
          </p>
        ) : null}
        {body}
      </main>
    </>
  );
}
