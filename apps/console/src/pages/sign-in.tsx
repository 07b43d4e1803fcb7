import { useEffect, useState } from "preact/hooks";
import { type ConsoleSession, session } from "../api";
import { ErrorMessage } from "../widgets/common";

/**
 * Where a sign-in link lands (`/console/sign-in#token=...`). The token is in the fragment, which the browser never
 * sends anywhere; the page takes it out of the address at once and posts it to open a session.
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
  useEffect(() => {
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
          {ended && !error ? (
            <div class="notice" role="status">
              <p>{ended.reason}</p>
              {ended.draftKept ? (
                <p>The form you were filling in is kept: it comes back once you sign in again in this tab.</p>
              ) : null}
            </div>
          ) : null}
          <ErrorMessage error={error} />
          <p>The console signs in with a one-time link. Ask for one on the server:</p>
          <pre class="code">
            <code>pnpm cli console link --account NAME</code>
          </pre>
          <p>Then open the link it prints in this browser. A link works once, for ten minutes.</p>
        </>
      )}
    </main>
  );
}
