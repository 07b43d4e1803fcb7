# frozen_string_literal: true

require_relative "test_helper"
require "tmpdir"

# Usage reports and character files, against a local server.
class UsageCharactersTest < Minitest::Test
  include TestHelpers

  AGENT_ID = TestHelpers::AGENT["id"]

  FIGURES = {
    "messages" => 3, "errors" => 1, "inputTokens" => 40, "outputTokens" => 12, "totalTokens" => 52,
    "costUsd" => 0.0012, "latencyMs" => { "p50" => 812.5, "p95" => 2210.0 }, "timeToFirstTokenMs" => { "p50" => nil, "p95" => nil }
  }.freeze

  REPORT = {
    "from" => "2026-11-24T00:00:00.000Z", "to" => "2026-11-25T00:00:00.000Z", "granularity" => "day",
    "groupBy" => %w[agentId model],
    "buckets" => [{ "start" => "2026-11-24T00:00:00.000Z", "end" => "2026-11-25T00:00:00.000Z",
                    "groups" => [{ "agentId" => AGENT_ID, "model" => "gpt-4o-mini" }.merge(FIGURES)] }],
    "totals" => FIGURES.merge("groups" => [{ "agentId" => AGENT_ID, "model" => "gpt-4o-mini" }.merge(FIGURES)])
  }.freeze

  FILE = {
    "name" => "Eliza", "bio" => "A bot.", "lore" => ["Grew up in a library"],
    "knowledge" => ["fact", { "path" => "docs/a.md" }], "plugins" => ["@elizaos/plugin-sql"],
    "settings" => { "secrets" => { "KEY" => "sk-hidden" }, "voice" => "soft" }
  }.freeze

  WARNINGS = [{ "field" => "knowledge[1]", "issue" => "kept, not read" }].freeze

  EXPORTED = {
    "name" => "Eliza", "bio" => ["A bot."], "style" => { "all" => ["rhyme"], "tone" => "warm" },
    "messageExamples" => [[{ "name" => "{{user1}}", "content" => { "text" => "Hi" } },
                           { "name" => "Eliza", "content" => { "text" => "Hello!" } }]],
    "knowledge" => ["fact", { "path" => "docs/a.md" }, { "directory" => { "path" => "notes" }, "shared" => true }],
    "plugins" => ["@elizaos/plugin-sql"],
    "settings" => { "voice" => "soft", "secrets" => {}, "agentry" => { "personality" => { "lore" => ["x"] } } },
    "secrets" => {}
  }.freeze

  def draft
    TestHelpers::AGENT.except("id", "status", "statusReason", "createdAt", "updatedAt", "apiEndpoint")
  end

  def test_the_account_report_with_group_by_as_a_list_and_a_time
    server = serve(FakeServer.data(REPORT))
    report = client_for(server).usage.get(from: Time.utc(2026, 11, 24), to: "2026-11-25", granularity: :day,
                                          group_by: %w[agentId model], agent_id: AGENT_ID)
    request = server.requests[0]
    assert_equal "/v1/usage", request.path
    assert_equal({ "from" => "2026-11-24T00:00:00.000Z", "to" => "2026-11-25", "granularity" => "day",
                   "groupBy" => "agentId,model", "agentId" => AGENT_ID }, request.query)
    assert_instance_of Agentry::Models::UsageReport, report
    assert_equal %w[agentId model], report.group_by
    group = report.buckets[0].groups[0]
    assert_equal [AGENT_ID, "gpt-4o-mini", 3, 1], [group.agent_id, group.model, group.messages, group.errors]
    assert_in_delta 812.5, group.latency_ms.p50
    assert_nil group.time_to_first_token_ms.p95
    assert_equal Time.utc(2026, 11, 25), report.to
    assert_equal 52, report.totals.total_tokens
    assert_equal REPORT, report.to_wire
  end

  def test_an_agent_report
    server = serve(FakeServer.data(REPORT.except("groupBy")))
    report = client_for(server).agents.usage.get(AGENT_ID, granularity: "hour")
    assert_equal "/v1/agents/#{AGENT_ID}/usage", server.requests[0].path
    assert_equal({ "granularity" => "hour" }, server.requests[0].query)
    assert_nil report.group_by
  end

  def test_import_sends_the_file_as_it_is_and_reads_the_agent_and_warnings
    server = serve(FakeServer.data(TestHelpers::AGENT, status: 201, warnings: WARNINGS))
    imported = client_for(server).agents.import_character(FILE)
    assert_equal %w[POST /v1/agents/import], [server.requests[0].method, server.requests[0].path]
    assert_equal({}, server.requests[0].query)
    assert_equal FILE, server.requests[0].body
    assert_instance_of Agentry::Models::CharacterImport, imported
    assert_instance_of Agentry::Models::Agent, imported.agent
    assert_equal AGENT_ID, imported.agent.id
    assert_equal [["knowledge[1]", "kept, not read"]], imported.warnings.map { |w| [w.field, w.issue] }
    assert_equal({ "agent" => TestHelpers::AGENT, "warnings" => WARNINGS }, imported.to_wire)
  end

  def test_a_dry_run_reads_a_preview_and_is_retried_like_a_read
    server = serve(FakeServer.api_error(503, "AGENT_UNAVAILABLE"), FakeServer.data(draft, warnings: WARNINGS))
    preview = client_for(server).agents.import_character(FILE, dry_run: true)
    assert_equal 2, server.requests.size
    assert_equal({ "dryRun" => "true" }, server.requests[1].query)
    assert_instance_of Agentry::Models::CharacterImportPreview, preview
    assert_instance_of Agentry::Models::AgentDraft, preview.agent
    assert_equal "Ada", preview.agent.name
    refute preview.agent.respond_to?(:id)
  end

  def test_use_default_model_asks_for_the_servers_default_model
    server = serve(FakeServer.data(draft, warnings: WARNINGS),
                   FakeServer.data(TestHelpers::AGENT, status: 201, warnings: WARNINGS))
    client = client_for(server)
    client.agents.import_character(FILE, dry_run: true, use_default_model: true)
    client.agents.import_character(FILE, use_default_model: true)
    assert_equal({ "dryRun" => "true", "useDefaultModel" => "true" }, server.requests[0].query)
    assert_equal({ "useDefaultModel" => "true" }, server.requests[1].query)
  end

  def test_an_import_is_retried_like_a_read_under_one_key
    server = serve(FakeServer.api_error(503, "AGENT_UNAVAILABLE"), FakeServer.data(TestHelpers::AGENT, status: 201,
                                                                                                        warnings: []))
    assert_equal AGENT_ID, client_for(server).agents.import_character(FILE).agent.id
    assert_equal 2, server.requests.size
    assert_equal 1, server.requests.map { |request| request.headers["idempotency-key"] }.uniq.size
  end

  def test_import_reads_the_file_from_a_path_given_as_a_string_or_a_pathname
    Dir.mktmpdir do |dir|
      path = File.join(dir, "eliza.character.json")
      File.write(path, JSON.pretty_generate(FILE))
      server = serve(FakeServer.data(TestHelpers::AGENT, status: 201, warnings: WARNINGS),
                     FakeServer.data(draft, warnings: WARNINGS))
      client = client_for(server)
      assert_equal AGENT_ID, client.agents.import_character(path).agent.id
      assert_equal "Ada", client.agents.import_character(Pathname.new(path), dry_run: true).agent.name
      assert_equal [FILE, FILE], server.requests.map(&:body)
      assert_equal({ "dryRun" => "true" }, server.requests[1].query)
    end
  end

  def test_a_path_that_cannot_be_read_or_is_not_an_object_is_refused_before_sending
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "broken.json"), "{ name: Eliza")
      File.write(File.join(dir, "list.json"), "[]")
      server = serve(FakeServer.data(TestHelpers::AGENT, status: 201, warnings: WARNINGS))
      agents = client_for(server).agents
      {
        "missing.json" => /Cannot read character from .*missing\.json/,
        "broken.json" => /broken\.json is not JSON/,
        "list.json" => /list\.json does not hold a JSON object/
      }.each do |name, message|
        error = assert_raises(Agentry::Error) { agents.import_character(File.join(dir, name)) }
        refute_kind_of Agentry::APIError, error
        assert_match message, error.message
      end
      assert_empty server.requests
    end
  end

  def test_export_reads_the_bare_file_and_writes_it_back_unchanged
    server = serve(FakeServer.json(200, EXPORTED), FakeServer.data(draft, warnings: []))
    client = client_for(server)
    exported = client.agents.export_character(AGENT_ID)
    assert_equal "/v1/agents/#{AGENT_ID}/character", server.requests[0].path
    assert_instance_of Agentry::Models::ExportedCharacterFile, exported
    assert_equal "Eliza", exported.name
    assert_equal({}, exported.settings.secrets)
    assert_equal "warm", exported.style[:tone]
    assert_equal "fact", exported.knowledge[0]
    assert_equal "docs/a.md", exported.knowledge[1].path
    assert_equal "Hello!", exported.message_examples[0][1].content.text
    assert_equal EXPORTED, exported.to_wire
    # The export is a character file again: a model is sent as its JSON.
    client.agents.import_character(exported, dry_run: true)
    assert_equal EXPORTED, server.requests[1].body
  end
end
