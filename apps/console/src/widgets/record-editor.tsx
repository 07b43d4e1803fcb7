import { useId } from "preact/hooks";

/** One entry of an object being edited: its key and its value as the person wrote it. */
export interface Entry {
  key: string;
  value: string;
}

/** An object's entries as editable text: strings as they are, anything else as JSON. */
export function entriesOf(record: Record<string, unknown>): Entry[] {
  return Object.entries(record).map(([key, value]) => ({
    key,
    value: typeof value === "string" ? value : JSON.stringify(value, null, 2),
  }));
}

/**
 * The object the entries stand for. A value that reads as a JSON list, object, number, boolean or null is that; any
 * other text is a string. Entries without a key are left out; a key given twice is an error.
 */
export function recordOf(entries: Entry[], label: string): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const { key, value } of entries) {
    const name = key.trim();
    if (name === "") continue;
    if (Object.hasOwn(record, name)) throw new Error(`${label}: the key "${name}" is given twice.`);
    record[name] = parsedValue(value);
  }
  return record;
}

function parsedValue(text: string): unknown {
  const trimmed = text.trim();
  if (/^[[{]/.test(trimmed) || /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(trimmed)) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/** Edits an object (an agent's personality) key by key, from the keyboard, with labelled fields. */
export function RecordEditor({
  label,
  entries,
  onChange,
}: {
  label: string;
  entries: Entry[];
  onChange: (entries: Entry[]) => void;
}) {
  const id = useId();
  const set = (index: number, change: Partial<Entry>) =>
    onChange(entries.map((entry, i) => (i === index ? { ...entry, ...change } : entry)));
  return (
    <fieldset class="record-editor">
      <legend>{label}</legend>
      <p class="muted small" id={`${id}-hint`}>
        Each value is text, or JSON for lists and objects (for example <code>["curious", "precise"]</code>).
      </p>
      {entries.length === 0 ? <p class="muted">No entries yet.</p> : null}
      <ol>
        {entries.map((entry, index) => (
          <li key={index} class="record-row">
            <label class="visually-hidden" for={`${id}-key-${index}`}>
              {`${label} key ${index + 1}`}
            </label>
            <input
              id={`${id}-key-${index}`}
              class="mono"
              placeholder="key"
              value={entry.key}
              onInput={(e) => set(index, { key: e.currentTarget.value })}
            />
            <label class="visually-hidden" for={`${id}-value-${index}`}>
              {`${label} value ${index + 1}`}
            </label>
            <textarea
              id={`${id}-value-${index}`}
              rows={Math.min(8, Math.max(1, entry.value.split("\n").length))}
              aria-describedby={`${id}-hint`}
              value={entry.value}
              onInput={(e) => set(index, { value: e.currentTarget.value })}
            />
            <button
              type="button"
              aria-label={`Remove ${label} entry ${index + 1}`}
              onClick={() => onChange(entries.filter((_, i) => i !== index))}
            >
              ✕
            </button>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => onChange([...entries, { key: "", value: "" }])}>
        Add to {label.toLowerCase()}
      </button>
    </fieldset>
  );
}
