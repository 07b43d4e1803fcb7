import { describe, expect, it } from "vitest";
import type { JsonObject } from "../src/json.js";
import { missingSources } from "../src/knowledge.js";

describe("knowledge references of a character", () => {
  it("names the file and folder references no document answers yet", () => {
    const personality: JsonObject = {
      knowledgeSources: [
        { position: 0, source: { path: "manuals/bicycle.pdf" } },
        { position: 1, source: { directory: { path: "manuals/kitchen", shared: false } } },
        { position: 2, source: { directory: "notes" } },
      ],
    };
    expect(missingSources(personality, [])).toEqual(["manuals/bicycle.pdf", "manuals/kitchen", "notes"]);
    expect(missingSources(personality, ["manuals/bicycle.pdf", "manuals/kitchen/kettle.md"])).toEqual([
      "notes",
    ]);
    expect(missingSources(undefined, [])).toEqual([]);
  });
});
