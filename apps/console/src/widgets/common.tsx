import type { FieldIssue } from "@agentry/sdk";
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { ApiError } from "../api";
import { BASE, onLinkClick } from "../router";

export function Link({
  to,
  children,
  class: className,
  "aria-current": current,
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  "aria-current"?: "page";
}) {
  return (
    <a
      href={`${BASE}${to}`}
      class={className}
      aria-current={current}
      onClick={(event) => onLinkClick(event as unknown as MouseEvent, to)}
    >
      {children}
    </a>
  );
}

/**
 * An error as the API worded it (its message says what to do), with its field issues, announced to screen
 * readers; the code and request id follow in small print, for a report to whoever runs the service.
 */
export function ErrorMessage({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const api = error instanceof ApiError ? error : null;
  const message = api ? api.message : error instanceof Error ? error.message : String(error);
  const reference = [
    api && api.code !== "NETWORK_ERROR" ? api.code : null,
    api?.requestId ? `request ${api.requestId}` : null,
  ].filter((part) => part !== null);
  return (
    <div class="error" role="alert">
      {message}
      {api && api.details.length > 0 ? (
        <ul>
          {api.details.map((detail) => (
            <li key={`${detail.field}:${detail.issue}`}>
              <code>{detail.field}</code> {detail.issue}
            </li>
          ))}
        </ul>
      ) : null}
      {reference.length > 0 ? <small class="muted reference"> ({reference.join(" · ")})</small> : null}
    </div>
  );
}

/** Runs an async action, keeping its error and whether it is running. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

/**
 * A confirmation dialog (the native `<dialog>`, modal: focus moves into it, Escape cancels, focus returns to the
 * button that opened it).
 */
export function ConfirmButton({
  label,
  title,
  message,
  confirmLabel,
  onConfirm,
  class: className = "danger",
  disabled,
}: {
  label: ComponentChildren;
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  class?: string;
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={className} disabled={disabled} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} class="dialog">
        <h2 id={titleId}>{title}</h2>
        <div>{message}</div>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" class="danger" disabled={busy} onClick={confirm}>
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** A secret shown this once, with a copy button and the warning that it cannot be shown again. */
export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
    } catch {
      field.current?.select();
      document.execCommand("copy");
    }
    setCopied(true);
  };
  return (
    <section class="secret" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{label}</h3>
      <p class="warning" role="note">
        Copy it now: it is shown only this once and cannot be shown again.
      </p>
      <div class="row">
        <label for={id} class="visually-hidden">
          {label}
        </label>
        <input
          id={id}
          ref={field}
          readOnly
          value={secret}
          class="mono grow"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      <span aria-live="polite" class="visually-hidden">
        {copied ? "Copied to the clipboard" : ""}
      </span>
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** A labelled form field. */
export function Field({
  label,
  hint,
  children,
  id,
}: {
  label: string;
  hint?: string;
  children: ComponentChildren;
  id: string;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint ? (
        <small class="muted" id={`${id}-hint`}>
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A table that may scroll sideways on a narrow screen: a labelled region that takes focus to scroll by keyboard. */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must take focus to scroll from the keyboard
    <section class="table-wrap" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}

/**
 * A set chosen as "every one" (including those added later) or as some of `options`: the first box, and when
 * it is cleared, one box per option.
 */
export function AllOrSome({
  legend,
  allLabel,
  options,
  all,
  chosen,
  onAll,
  onChosen,
}: {
  legend: string;
  allLabel: string;
  options: readonly string[];
  all: boolean;
  chosen: readonly string[];
  onAll: (all: boolean) => void;
  onChosen: (chosen: string[]) => void;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => onAll(e.currentTarget.checked)} />
        {allLabel}
      </label>
      {all ? null : (
        <div class="checks">
          {options.map((option) => (
            <label key={option} class="check">
              <input
                type="checkbox"
                checked={chosen.includes(option)}
                onChange={(e) =>
                  onChosen(
                    e.currentTarget.checked
                      ? [...chosen, option]
                      : chosen.filter((other) => other !== option),
                  )
                }
              />
              <code>{option}</code>
            </label>
          ))}
        </div>
      )}
    </fieldset>
  );
}

/** The warnings of a write, by field: what was kept but will not act. */
export function Warnings({ title, warnings }: { title: string; warnings: FieldIssue[] }) {
  return (
    <section class="warnings" aria-label={title}>
      <h3>{title}</h3>
      <ul>
        {warnings.map((warning) => (
          <li key={`${warning.field}:${warning.issue}`}>
            <code>{warning.field}</code> {warning.issue}
          </li>
        ))}
      </ul>
    </section>
  );
}
