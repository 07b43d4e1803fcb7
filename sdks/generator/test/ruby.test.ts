import { describe, expect, it } from "vitest";
import { type ApiModel, loadModel } from "../src/model.js";
import { emitter } from "../src/ruby.js";

const model = loadModel();
const files = emitter.emit(model);
const file = (name: string) =>
  files.find((f) => f.path === `ruby/lib/agentry/generated/${name}`)?.contents ?? "";

describe("ruby emitter", () => {
  it("writes its three files into the gem's generated directory, marked as generated", () => {
    expect(files.map((f) => f.path).sort()).toEqual([
      "ruby/lib/agentry/generated/api.rb",
      "ruby/lib/agentry/generated/models.rb",
      "ruby/lib/agentry/generated/resources.rb",
    ]);
    for (const f of files) {
      expect(f.contents.split("\n").slice(0, 3)).toEqual([
        "# frozen_string_literal: true",
        "",
        "# Generated from sdks/openapi.json by sdks/generator (src/ruby.ts) — do not edit.",
      ]);
      expect(f.contents).not.toMatch(/ +\n/);
      expect(f.contents.endsWith("end\n")).toBe(true);
    }
  });

  it("declares each model's fields with their JSON names and conversions", () => {
    const models = file("models.rb");
    expect(models).toContain("class Agent < Agentry::Model");
    expect(models).toContain('field :model_provider, "modelProvider", [:nullable, :string], required: true');
    expect(models).toContain('field :created_at, "createdAt", :time, required: true');
    expect(models).toContain(
      'field :plugins, "plugins", [:array, [:union, :string, "PluginConfig"]], required: true',
    );
    expect(models).toContain('field :key, "key", :string, required: true, sensitive: true');
    expect(models).toContain('field :max_tokens, "maxTokens", [:nullable, :integer]\n');
    // Request bodies become keyword arguments, not classes.
    expect(models).not.toContain("class CreateAgentRequest");
    expect(models).toContain('AGENTS_READ = "agents:read"');
  });

  it("gives every operation a method with keyword arguments, and says which take an Idempotency-Key", () => {
    const resources = file("resources.rb");
    for (const line of [
      "def create(\n        name:,\n        bio: nil,",
      "def list(page: nil, limit: nil, status: nil, sort_by: nil, order: nil, request_options: nil)",
      "def get(agent_id, request_options: nil)",
      "model_provider: Agentry::OMIT,",
      'body["modelProvider"] = model_provider unless model_provider.equal?(Agentry::OMIT)',
      "def create(\n          agent_id,\n          text:,\n          user_id: nil,\n          room_id: nil,\n          context: nil,\n          on_disconnect: nil,\n          on_conflict: nil,\n          request_options: nil\n        )",
      "          on_disconnect: nil,\n          on_conflict: nil,\n          request_options: nil,\n          &block\n        )",
      'body["stream"] = true',
      "def revoke(key_id, request_options: nil)",
      '"/agents/#{path_segment(:agent_id, agent_id)}/messages",',
    ]) {
      expect(resources).toContain(line);
    }
    expect(resources).toContain(
      'api_request(:post, "/agents", type: "Agent", body: body, options: request_options)',
    );
    expect(resources).not.toContain("safety");
    // The stream and the background send are methods of their own.
    expect(
      resources.match(/`idempotency_key:`, the `Idempotency-Key` sent on each of its attempts/g)?.length,
    ).toBe(model.operations.filter((op) => op.idempotencyKey).length + 2);
    expect(resources.match(/# Sent with an `Idempotency-Key`/g)?.length).toBe(
      model.operations.filter((op) => op.idempotencyKey).length + 2,
    );
    // `send` would hide Object#send.
    expect(resources).not.toMatch(/def send\b/);
  });

  it("maps error codes to their statuses", () => {
    expect(file("api.rb")).toContain('"AGENT_UNAVAILABLE" => 503');
    expect(file("api.rb")).toContain('DEFAULT_BASE_URL = "http://localhost:8080/v1"');
  });

  it("refuses a field that would hide a model's own method", () => {
    const renamed: ApiModel = structuredClone(model);
    const usage = renamed.types.find((type) => type.name === "Usage");
    if (usage?.fields[0] === undefined) throw new Error("no Usage type");
    usage.fields[0].name = "hash";
    expect(() => emitter.emit(renamed)).toThrow(/would hide the models' hash method/);
  });

  it("pages cursor lists, streams NDJSON, and reads each answer of an import as its own model", () => {
    const resources = file("resources.rb");
    for (const line of [
      "def export(user_id, request_options: nil, &block)",
      'api_lines(\n          :get,\n          "/users/#{path_segment(:user_id, user_id)}/export",\n          type: [:keyed, ["conversationId", "HistoryMessage"], ["source", "Memory"]],',
      "api_cursor_paginate(",
      'pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",',
      "def import_character(character, dry_run: nil, use_default_model: nil, request_options: nil)",
      'type = dry_run == true ? "CharacterImportPreview" : "CharacterImport"',
      "body: json_object_argument(:character, character),",
      "# @param character [Hash, String, Pathname] An elizaOS character file",
      'data_as: "agent"',
      "def export_character(agent_id, request_options: nil)",
      "def get(\n          agent_id,\n          from: nil,\n          to: nil,\n          granularity: nil,\n          user_id: nil,\n          group_by: nil,",
      "class Usage < Agentry::Resource",
    ]) {
      expect(resources).toContain(line);
    }
    expect(file("models.rb")).toContain('field :agent, "agent", "AgentDraft", required: true');
  });

  it("sends in the background, reads a background message, and waits for it", () => {
    const resources = file("resources.rb");
    expect(resources).toContain("def create_background(\n          agent_id,\n          text:,");
    expect(resources).toContain('body["background"] = true');
    expect(resources).not.toContain("background: nil");
    expect(resources).toContain('            type: "BackgroundMessageAccepted",\n            body: body,');
    expect(resources).toContain(
      '            type: "BackgroundMessage",\n            marker: "status",\n            main_method: "get",',
    );
    expect(resources).toContain(
      '          Agentry::Polling.until_done(\n            pending: { status: "pending" },\n            poll_interval: poll_interval,\n            max_wait: max_wait\n          ) do\n            get_background(agent_id, message_id, request_options: request_options)\n          end',
    );
  });
});
