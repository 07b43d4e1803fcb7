// @vitest-environment happy-dom
import { render } from "preact";
import { describe, expect, it } from "vitest";
import { ListEditor } from "./list-editor";

function mount(items: string[]) {
  const changes: string[][] = [];
  const root = document.createElement("div");
  document.body.append(root);
  render(<ListEditor label="Bio" items={items} onChange={(next) => changes.push(next)} />, root);
  const button = (name: string) =>
    [...root.querySelectorAll("button")].find(
      (b) => (b.getAttribute("aria-label") ?? b.textContent) === name,
    )!;
  return { root, changes, button };
}

describe("ListEditor", () => {
  it("labels every item and its buttons", () => {
    const { root } = mount(["a", "b"]);
    expect(root.querySelector("legend")?.textContent).toBe("Bio");
    const labels = [...root.querySelectorAll("label")].map((label) => label.textContent);
    expect(labels).toEqual(["Bio 1", "Bio 2"]);
    for (const area of root.querySelectorAll("textarea")) {
      expect(root.querySelector(`label[for="${area.id}"]`)).not.toBeNull();
    }
  });

  it("adds, removes and moves items", () => {
    const { changes, button } = mount(["a", "b", "c"]);
    button("Add to bio").click();
    button("Remove Bio 2").click();
    button("Move Bio 3 up").click();
    button("Move Bio 1 down").click();
    expect(changes).toEqual([
      ["a", "b", "c", ""],
      ["a", "c"],
      ["a", "c", "b"],
      ["b", "a", "c"],
    ]);
    expect(button("Move Bio 1 up").disabled).toBe(true);
    expect(button("Move Bio 3 down").disabled).toBe(true);
  });

  it("edits an item in place", () => {
    const { root, changes } = mount(["a", "b"]);
    const second = root.querySelectorAll("textarea")[1]!;
    second.value = "bee";
    second.dispatchEvent(new Event("input", { bubbles: true }));
    expect(changes).toEqual([["a", "bee"]]);
  });
});
