import { describe, expect, it } from "vitest";
import { LOOP_MIN_RUN, LoopDetector } from "./repetition.js";

/** The index of the token at which the detector first reports a loop, fed one token at a time; -1 if never. */
function firstLoopAt(tokens: readonly number[], detector = new LoopDetector()): number {
  return tokens.findIndex((token) => detector.push([token]));
}

const repeat = (unit: readonly number[], times: number) => Array.from({ length: times }, () => unit).flat();
/** Distinct tokens, as varied text has them. */
const varied = (count: number, from = 1000) => Array.from({ length: count }, (_, i) => from + i);

describe("the loop detector", () => {
  it("ends a run of one token once it spans the minimum run", () => {
    const tokens = [...varied(10), ...repeat([7], 100)];
    // The 32nd token of the run is the first at which 32 identical tokens stand back to back.
    expect(firstLoopAt(tokens)).toBe(10 + LOOP_MIN_RUN - 1);
  });

  it("ends a short sequence repeated back to back", () => {
    const unit = [5, 6, 7, 8, 9];
    const tokens = [...varied(20), ...repeat(unit, 20)];
    expect(firstLoopAt(tokens)).toBe(20 + LOOP_MIN_RUN - 1);
  });

  it("needs a long unit to repeat at least three times", () => {
    const unit = varied(16, 50);
    const tokens = [...varied(5), ...repeat(unit, 4)];
    // Two copies span 32 tokens, the minimum run, but a third copy is needed: 48 tokens.
    expect(firstLoopAt(tokens)).toBe(5 + 48 - 1);
  });

  it("lets a run shorter than the minimum through, and starts over when the text moves on", () => {
    const almost = repeat([3, 4], LOOP_MIN_RUN / 2 - 1);
    const tokens = [...almost, ...varied(5), ...almost, ...varied(5)];
    expect(firstLoopAt(tokens)).toBe(-1);
  });

  it("lets varied text through, and repetitions of units longer than it watches", () => {
    expect(firstLoopAt(varied(500))).toBe(-1);
    expect(firstLoopAt(repeat(varied(17), 10))).toBe(-1);
  });

  it("takes tokens in chunks and reports a loop anywhere in a chunk", () => {
    const detector = new LoopDetector();
    expect(detector.push(varied(8))).toBe(false);
    expect(detector.push(repeat([1, 2], 10))).toBe(false);
    expect(detector.push(repeat([1, 2], 10))).toBe(true);
  });

  it("takes other bounds", () => {
    const detector = new LoopDetector({ maxPeriod: 2, minRun: 6, minRepeats: 3 });
    expect(firstLoopAt([9, 1, 2, 1, 2, 1, 2, 1], detector)).toBe(6);
  });
});
