/**
 * The form a person was filling in when the session ended (signed out in another tab, expired, revoked): kept in
 * this tab's sessionStorage, with the page it was on, and put back once they have signed in again. Fields are
 * known by their label (and their place among fields of the same label), which stays the same across loads.
 */

const KEY = "agentry.console.draft";
/** How long a restored page may take to show its fields (an edit form loads its agent first). */
const RESTORE_WITHIN_MS = 10_000;

interface FieldValue {
  label: string;
  index: number;
  value: string;
  checked?: boolean;
}

export interface Draft {
  /** The console path and query the form was on (`/agents/new`). */
  path: string;
  fields: FieldValue[];
}

type FormField = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

const SKIPPED_TYPES = new Set(["hidden", "password", "file", "submit", "button", "reset"]);

function labelOf(field: FormField): string {
  return (field.labels?.[0]?.textContent ?? field.getAttribute("aria-label") ?? field.name ?? "").trim();
}

/** The fields a person can type into, each with its label and its place among those of the same label. */
function fieldsOf(root: ParentNode): { field: FormField; label: string; index: number }[] {
  const seen = new Map<string, number>();
  const found: { field: FormField; label: string; index: number }[] = [];
  for (const field of root.querySelectorAll<FormField>("input, textarea, select")) {
    if (field instanceof HTMLInputElement && SKIPPED_TYPES.has(field.type)) continue;
    if ((field as HTMLInputElement).readOnly || field.disabled || field.closest("dialog")) continue;
    const label = labelOf(field);
    if (!label) continue;
    const index = seen.get(label) ?? 0;
    seen.set(label, index + 1);
    found.push({ field, label, index });
  }
  return found;
}

function isCheckable(field: FormField): field is HTMLInputElement {
  return field instanceof HTMLInputElement && (field.type === "checkbox" || field.type === "radio");
}

/** Keeps the fields under `root` for the page at `path`; answers whether anything was worth keeping. */
export function keepDraft(root: ParentNode | null, path: string): boolean {
  if (!root) return false;
  const fields = fieldsOf(root).map(({ field, label, index }) =>
    isCheckable(field)
      ? { label, index, value: field.value, checked: field.checked }
      : { label, index, value: field.value },
  );
  // A page with nothing typed in has nothing to lose.
  if (!fields.some((field) => field.checked !== undefined || field.value !== "")) return false;
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ path, fields } satisfies Draft));
    return true;
  } catch {
    return false;
  }
}

/** The kept draft, if any, which is then no longer kept. */
export function takeDraft(): Draft | null {
  try {
    const text = sessionStorage.getItem(KEY);
    sessionStorage.removeItem(KEY);
    return text ? (JSON.parse(text) as Draft) : null;
  } catch {
    return null;
  }
}

/** Whether a draft is waiting for the next sign-in. */
export function hasDraft(): boolean {
  try {
    return sessionStorage.getItem(KEY) !== null;
  } catch {
    return false;
  }
}

/** Sets a field as typing would, so that the page's own handlers take the value. */
function fill(field: FormField, saved: FieldValue): boolean {
  if (isCheckable(field)) {
    if (field.checked !== saved.checked) field.click();
    return true;
  }
  if (field instanceof HTMLSelectElement && ![...field.options].some((o) => o.value === saved.value)) {
    return false;
  }
  if (field.value === saved.value) return true;
  field.value = saved.value;
  field.dispatchEvent(new Event(field instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
  return true;
}

/**
 * Puts the draft's values into the fields under `root` as they appear (a page may render its form only once its
 * data has loaded); `done` is called once every field is back, or after RESTORE_WITHIN_MS with what was.
 */
export function restoreDraft(root: HTMLElement, draft: Draft, done: (restored: number) => void): () => void {
  const waiting = new Map(draft.fields.map((saved) => [`${saved.label}\u0000${saved.index}`, saved]));
  let restored = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    observer.disconnect();
    clearTimeout(timer);
    done(restored);
  };
  // One field at a time, each after the page has rendered the one before: a page's handler may build its next
  // state from the state of its last render, so two changes in one go would lose the first.
  const attempt = () => {
    if (finished) return;
    for (const { field, label, index } of fieldsOf(root)) {
      const key = `${label}\u0000${index}`;
      const saved = waiting.get(key);
      if (!saved || !fill(field, saved)) continue;
      waiting.delete(key);
      if (saved.value !== "" || saved.checked) restored += 1;
      if (waiting.size === 0) finish();
      else setTimeout(attempt, 0);
      return;
    }
  };
  const observer = new MutationObserver(attempt);
  const timer = setTimeout(finish, RESTORE_WITHIN_MS);
  observer.observe(root, { childList: true, subtree: true });
  attempt();
  return finish;
}
