import { useEffect, useState } from "preact/hooks";
import { type AccountChoice, type ConsoleSession, type OidcStatus, session, sso } from "../api";
import { ErrorMessage } from "../widgets/common";

/**
 * What the sign-in page says when the OIDC callback sent the browser back (`?sso=` and the email signed in), with
 * what to do; null when there is nothing to refuse (no outcome, or several accounts to pick from).
 */
export function ssoRefusal(outcome: string | null, email: string | null): string | null {
  switch (outcome) {
    case null:
    case "pick":
      return null;
    case "no-member":
      return `No account here has a member with the email ${email ?? "you signed in with"}. Ask an owner or admin of your account to invite that address, then sign in with SSO again.`;
    case "unverified":
      return "Your identity provider did not vouch for your email address (no verified email). Ask its administrator to verify it, or sign in with a link from the server.";
    case "expired":
      return "The sign-in was not started in this browser, or took more than ten minutes. Sign in with SSO again.";
    case "unavailable":
      return "The identity provider could not be reached. Try again in a moment, or sign in with a link from the server.";
    case "denied":
      return "The identity provider did not let you in, or you declined there. Sign in with SSO again to retry.";
    default:
      return "The identity provider's answer could not be used. Sign in with SSO again; if it keeps failing, ask whoever runs this service to check its OIDC settings (its log says why).";
  }
}

/**
 * Where a sign-in link lands (`/console/sign-in#token=...`), and where the OIDC sign-in starts and comes back to
 * when it needs a word from the person. The link's token is in the fragment, which the browser never sends
 * anywhere; the page takes it out of the address at once and posts it to open a session.
 */
export function SignInPage({
  onSignedIn,
  ended,
}: {
  onSignedIn: (session: ConsoleSession) => void;
  /** Why the session this tab was in ended, and whether a form being filled was kept. */
  ended?: { reason: string; draftKept: boolean } | null;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState<OidcStatus | null>(null);
  const [outcome] = useState(() => {
    const query = new URLSearchParams(location.search);
    return { sso: query.get("sso"), email: query.get("email") };
  });
  const refusal = ssoRefusal(outcome.sso, outcome.email);
  useEffect(() => {
    // Without it the page still signs in by link: the SSO button is only left out.
    sso.status().then(
      ({ data }) => setOidc(data),
      () => setOidc(null),
    );
    // A refusal is said once: reloading the page does not say it again.
    if (refusal !== null) history.replaceState(null, "", location.pathname);
    const take = () => {
      const token = new URLSearchParams(location.hash.slice(1)).get("token");
      if (!token) return;
      history.replaceState(null, "", location.pathname);
      setError(null);
      setBusy(true);
      session.signIn(token).then(
        ({ data }) => onSignedIn(data),
        (caught: unknown) => {
          setError(caught);
          setBusy(false);
        },
      );
    };
    take();
    // A link opened in this tab again (after a failed link, or after signing out) changes only the fragment:
    // the browser does not load the page again.
    window.addEventListener("hashchange", take);
    return () => window.removeEventListener("hashchange", take);
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to the Agentry console</h1>
      {busy ? (
        <p aria-live="polite">Signing in…</p>
      ) : (
        <>
          {ended && !error && outcome.sso === null ? (
            <div class="notice" role="status">
              <p>{ended.reason}</p>
              {ended.draftKept ? (
                <p>The form you were filling in is kept: it comes back once you sign in again in this tab.</p>
              ) : null}
            </div>
          ) : null}
          {refusal !== null ? (
            <div class="error" role="alert">
              {refusal}
            </div>
          ) : null}
          <ErrorMessage error={error} />
          {outcome.sso === "pick" ? <AccountPicker onSignedIn={onSignedIn} /> : null}
          {oidc?.enabled && oidc.startUrl ? (
            <section aria-labelledby="sso-title">
              <h2 id="sso-title">Single sign-on</h2>
              <p>Sign in with your organisation's identity provider, as the member with your email.</p>
              <a class="button primary" href={oidc.startUrl}>
                Sign in with SSO
              </a>
            </section>
          ) : null}
          <section>
            {oidc?.enabled ? <h2>Sign-in link</h2> : null}
            <p>The console signs in with a one-time link. Ask for one on the server:</p>
            <pre class="code">
              <code>pnpm cli console link --account NAME</code>
            </pre>
            <p>Then open the link it prints in this browser. A link works once, for ten minutes.</p>
          </section>
        </>
      )}
    </main>
  );
}

/** The accounts an email signed in by OIDC is a member of, to pick the one this session acts in. */
function AccountPicker({ onSignedIn }: { onSignedIn: (session: ConsoleSession) => void }) {
  const [choices, setChoices] = useState<{ email: string; accounts: AccountChoice[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [picking, setPicking] = useState<string | null>(null);
  useEffect(() => {
    sso.choices().then(
      ({ data }) => setChoices(data),
      (caught: unknown) => setError(caught),
    );
  }, []);
  const pick = (account: AccountChoice) => {
    setPicking(account.id);
    setError(null);
    sso.pick(account.id).then(
      ({ data }) => {
        history.replaceState(null, "", location.pathname);
        onSignedIn(data);
      },
      (caught: unknown) => {
        setError(caught);
        setPicking(null);
      },
    );
  };
  return (
    <section class="card" aria-labelledby="pick-title">
      <h2 id="pick-title">Choose an account</h2>
      <ErrorMessage error={error} />
      {choices === null ? (
        error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : (
        <>
          <p>{choices.email} is a member of several accounts. Pick the one to sign in to:</p>
          <ul class="choices">
            {choices.accounts.map((account) => (
              <li key={account.id}>
                <button
                  type="button"
                  class="primary"
                  disabled={picking !== null}
                  onClick={() => pick(account)}
                >
                  {account.name}
                </button>{" "}
                <span class="muted">as {account.role}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
