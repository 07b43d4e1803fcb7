// @vitest-environment happy-dom
import { render } from "preact";
import { describe, expect, it } from "vitest";
import { type Entry, entriesOf, RecordEditor, recordOf } from "./record-editor";

describe("RecordEditor", () => {
  it("turns an object into entries and back, whatever its values", () => {
    const record = {
      tone: "dry",
      adjectives: ["curious"],
      style: { all: ["brief"] },
      level: 3,
      formal: false,
    };
    expect(recordOf(entriesOf(record), "Personality")).toEqual(record);
  });

  it("keeps text that only looks half like JSON as text", () => {
    expect(
      recordOf(
        [
          { key: "motto", value: "[not json" },
          { key: "n", value: "12 monkeys" },
        ],
        "P",
      ),
    ).toEqual({
      motto: "[not json",
      n: "12 monkeys",
    });
  });

  it("labels every key and value, and adds and removes entries", () => {
    const changes: Entry[][] = [];
    const root = document.createElement("div");
    render(
      <RecordEditor
        label="Personality"
        entries={[{ key: "tone", value: "dry" }]}
        onChange={(e) => changes.push(e)}
      />,
      root,
    );
    const labels = [...root.querySelectorAll("label")].map((label) => label.textContent);
    expect(labels).toEqual(["Personality key 1", "Personality value 1"]);
    const buttons = [...root.querySelectorAll("button")];
    buttons.find((b) => b.textContent === "Add to personality")!.click();
    buttons.find((b) => b.getAttribute("aria-label") === "Remove Personality entry 1")!.click();
    expect(changes).toEqual([
      [
        { key: "tone", value: "dry" },
        { key: "", value: "" },
      ],
      [],
    ]);
  });
});
