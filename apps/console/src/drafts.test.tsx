// @vitest-environment happy-dom
import { render } from "preact";
import { useState } from "preact/hooks";
import { afterEach, describe, expect, it } from "vitest";
import { hasDraft, keepDraft, restoreDraft, takeDraft } from "./drafts";

/** A form whose handlers build the next state from the last render's, as the console's forms do. */
function Form({ loaded = true }: { loaded?: boolean }) {
  const [draft, setDraft] = useState({ name: "", bio: "", kind: "a", public: false });
  if (!loaded) return <p>Loading…</p>;
  return (
    <form>
      <label for="name">Name</label>
      <input
        id="name"
        value={draft.name}
        onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
      />
      <label for="bio">Bio</label>
      <textarea
        id="bio"
        value={draft.bio}
        onInput={(e) => setDraft({ ...draft, bio: e.currentTarget.value })}
      />
      <label for="kind">Kind</label>
      <select
        id="kind"
        value={draft.kind}
        onChange={(e) => setDraft({ ...draft, kind: e.currentTarget.value })}
      >
        <option value="a">A</option>
        <option value="b">B</option>
      </select>
      <label>
        <input
          type="checkbox"
          checked={draft.public}
          onChange={(e) => setDraft({ ...draft, public: e.currentTarget.checked })}
        />
        Public
      </label>
      <output>{JSON.stringify(draft)}</output>
    </form>
  );
}

function type(root: HTMLElement, selector: string, value: string) {
  const field = root.querySelector<HTMLInputElement>(selector)!;
  field.value = value;
  field.dispatchEvent(new Event(field.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
}

async function settle() {
  await new Promise((resolve) => setTimeout(resolve, 20));
}

afterEach(() => {
  sessionStorage.clear();
  document.body.innerHTML = "";
});

describe("drafts", () => {
  it("keeps a form's fields and puts every one back, through the page's own handlers", async () => {
    const before = document.createElement("main");
    document.body.append(before);
    render(<Form />, before);
    type(before, "#name", "Ada");
    await settle();
    type(before, "#bio", "Counts things");
    await settle();
    type(before, "#kind", "b");
    await settle();
    before.querySelector<HTMLInputElement>("input[type=checkbox]")!.click();
    await settle();
    expect(keepDraft(before, "/agents/new")).toBe(true);
    render(null, before);

    const after = document.createElement("main");
    document.body.append(after);
    render(<Form />, after);
    const draft = takeDraft()!;
    expect(draft.path).toBe("/agents/new");
    expect(hasDraft()).toBe(false);
    const restored = await new Promise<number>((resolve) => restoreDraft(after, draft, resolve));
    expect(restored).toBe(4);
    await settle();
    expect(JSON.parse(after.querySelector("output")!.textContent!)).toEqual({
      name: "Ada",
      bio: "Counts things",
      kind: "b",
      public: true,
    });
  });

  it("waits for a form that renders once its data has loaded", async () => {
    const root = document.createElement("main");
    document.body.append(root);
    render(<Form loaded={false} />, root);
    const done = new Promise<number>((resolve) =>
      restoreDraft(root, { path: "/x", fields: [{ label: "Name", index: 0, value: "Later" }] }, resolve),
    );
    await settle();
    render(<Form loaded />, root);
    expect(await done).toBe(1);
    await settle();
    expect(root.querySelector<HTMLInputElement>("#name")!.value).toBe("Later");
  });

  it("keeps nothing from a page with nothing typed in", () => {
    const root = document.createElement("main");
    document.body.append(root);
    root.innerHTML = '<label for="q">Search</label><input id="q" value="">';
    expect(keepDraft(root, "/agents")).toBe(false);
    expect(takeDraft()).toBeNull();
  });
});
