import { describe, expect, it } from "vitest";
import { publicSettings, updatedSettings } from "./agents.js";

describe("settings.secrets", () => {
  it("is left out of what reads present, and nothing else is", () => {
    expect(publicSettings({ temperature: 1, secrets: { KEY: "v" } })).toEqual({ temperature: 1 });
    const plain = { temperature: 1 };
    expect(publicSettings(plain)).toBe(plain);
  });

  it("survives an update of settings that does not send it, and is replaced by one that does", () => {
    const stored: Record<string, unknown> = { theme: "dark", secrets: { KEY: "v" } };
    expect(updatedSettings(stored, { theme: "light" })).toEqual({ theme: "light", secrets: { KEY: "v" } });
    expect(updatedSettings(stored, { secrets: {} })).toEqual({ secrets: {} });
    expect(updatedSettings({ theme: "dark" }, { theme: "light" })).toEqual({ theme: "light" });
  });
});
