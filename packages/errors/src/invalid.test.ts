import { describe, expect, it } from "vitest";
import { invalid, invalidInput, invalidInputListing, invalidRequest } from "./invalid.js";

describe("INVALID_REQUEST refusals", () => {
  it("names one field in the message and the details", () => {
    const error = invalid("limit", "must be from 1 to 100");
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toBe("limit must be from 1 to 100.");
    expect(error.details).toEqual([{ field: "limit", issue: "must be from 1 to 100" }]);
  });

  it("words one issue as invalid does and points to the details for several", () => {
    expect(invalidRequest([{ field: "url", issue: "must be https" }]).message).toBe("url must be https.");
    const several = [
      { field: "url", issue: "must be https" },
      { field: "events", issue: "must not be empty" },
    ];
    const error = invalidRequest(several);
    expect(error.message).toBe("The request is invalid; see details.");
    expect(error.details).toEqual(several);
  });

  it("summarises the first issue of an input and counts the rest", () => {
    expect(invalidInput("request body", [{ field: "name", issue: "Required" }]).message).toBe(
      "Invalid request body: name: Required.",
    );
    const error = invalidInput("character file", [
      { field: "name", issue: "Required" },
      { field: "bio[0]", issue: "too long" },
      { field: "x", issue: "unknown field" },
    ]);
    expect(error.message).toBe("Invalid character file: name: Required (and 2 more).");
    expect(error.details).toHaveLength(3);
  });

  it("lists every issue of an input when asked to", () => {
    const error = invalidInputListing("request body", [
      { field: "plugins[0].name", issue: "is not installed" },
      { field: "settings.temperature", issue: "must be from 0 to 2" },
    ]);
    expect(error.message).toBe(
      "Invalid request body: plugins[0].name is not installed; settings.temperature must be from 0 to 2.",
    );
  });
});
