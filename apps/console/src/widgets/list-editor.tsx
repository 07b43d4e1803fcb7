import { useId } from "preact/hooks";

/**
 * Edits a list of strings (an agent's bio, knowledge or goals): one labelled text area per item, items added,
 * removed and moved with buttons, so the whole editor works from the keyboard.
 */
export function ListEditor({
  label,
  items,
  onChange,
  placeholder,
}: {
  label: string;
  items: string[];
  onChange: (items: string[]) => void;
  placeholder?: string;
}) {
  const id = useId();
  const set = (index: number, value: string) =>
    onChange(items.map((item, i) => (i === index ? value : item)));
  const remove = (index: number) => onChange(items.filter((_, i) => i !== index));
  const move = (index: number, by: number) => {
    const next = [...items];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    onChange(next);
  };
  return (
    <fieldset class="list-editor">
      <legend>{label}</legend>
      {items.length === 0 ? <p class="muted">None yet.</p> : null}
      <ol>
        {items.map((item, index) => (
          <li key={index} class="row">
            <label class="visually-hidden" for={`${id}-${index}`}>
              {`${label} ${index + 1}`}
            </label>
            <textarea
              id={`${id}-${index}`}
              rows={2}
              class="grow"
              value={item}
              placeholder={placeholder}
              onInput={(event) => set(index, event.currentTarget.value)}
            />
            <div class="item-actions">
              <button
                type="button"
                aria-label={`Move ${label} ${index + 1} up`}
                disabled={index === 0}
                onClick={() => move(index, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                aria-label={`Move ${label} ${index + 1} down`}
                disabled={index === items.length - 1}
                onClick={() => move(index, 1)}
              >
                ↓
              </button>
              <button type="button" aria-label={`Remove ${label} ${index + 1}`} onClick={() => remove(index)}>
                ✕
              </button>
            </div>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => onChange([...items, ""])}>
        Add to {label.toLowerCase()}
      </button>
    </fieldset>
  );
}
