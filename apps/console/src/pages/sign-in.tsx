import { useEffect, useState } from "preact/hooks";
import { type ConsoleSession, session } from "../api";
import { ErrorMessage } from "../widgets/common";

/**
 * Where a sign-in link lands (`/console/sign-in#token=...`). The token is in the fragment, which the browser never
 * sends anywhere; the page takes it out of the address at once and posts it to open a session.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: ConsoleSession) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const token = new URLSearchParams(location.hash.slice(1)).get("token");
    if (!token) return;
    history.replaceState(null, "", location.pathname);
    setBusy(true);
    session.signIn(token).then(
      ({ data }) => onSignedIn(data),
      (caught: unknown) => {
        setError(caught);
        setBusy(false);
      },
    );
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to the Agentry console</h1>
      {busy ? (
        <p aria-live="polite">Signing in…</p>
      ) : (
        <>
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
