# frozen_string_literal: true

require_relative "../test_helper"
require_relative "runner"

# The runner's pattern matcher and references, which decide whether a conformance step passed.
class ConformanceRunnerTest < Minitest::Test
  def run_with(vars = {})
    Conformance::ScenarioRun.new({ "clients" => {} }, { "keys" => {} }).tap { |run| run.vars.merge!(vars) }
  end

  def test_resolves_references_to_saved_results_of_any_type
    run = run_with("agent" => { "id" => "agt_1", "bio" => %w[a b], "n" => 2 })
    assert_equal({ "id" => "agt_1", "first" => "b", "n" => 2, "$agent.id" => "keys are never references" },
                 run.resolve({ "id" => "$agent.id", "first" => "$agent.bio.1", "n" => "$agent.n",
                               "$agent.id" => "keys are never references" }))
    assert_equal ["not $a reference", "$1"], run.resolve(["not $a reference", "$1"])
    assert_raises(Conformance::ScenarioRun::Failure) { run.resolve("$agent.missing") }
  end

  def test_scalars_null_objects_and_arrays
    run = run_with
    assert_nil run.mismatch(1, 1.0)
    assert_nil run.mismatch(nil, nil)
    assert_nil run.mismatch({ "a" => 1 }, { "a" => 1, "b" => 2 })
    assert_nil run.mismatch({ "a" => nil }, {})
    refute_nil run.mismatch("1", 1)
    refute_nil run.mismatch(nil, "x")
    refute_nil run.mismatch({ "a" => 1 }, { "a" => 2 })
    refute_nil run.mismatch([1], [1, 2])
    refute_nil run.mismatch([{ "a" => 1 }], [{ "a" => 2 }])
    refute_nil run.mismatch(true, "true")
  end

  def test_operators
    run = run_with
    assert_nil run.mismatch({ "$regex" => "^agt_", "$type" => "string" }, "agt_1")
    refute_nil run.mismatch({ "$regex" => "^agt_" }, "msg_1")
    assert_nil run.mismatch({ "$type" => "integer", "$gte" => 1, "$lte" => 60 }, 58)
    assert_nil run.mismatch({ "$type" => "number" }, 3)
    refute_nil run.mismatch({ "$type" => "integer" }, 1.5)
    refute_nil run.mismatch({ "$gt" => 1 }, 1)
    refute_nil run.mismatch({ "$lt" => 1 }, nil)
    assert_nil run.mismatch({ "$length" => 2 }, %w[a b])
    refute_nil run.mismatch({ "$length" => 2 }, %w[a])
    assert_nil run.mismatch({ "$contains" => [{ "field" => "name" }] }, [{ "field" => "bio" }, { "field" => "name" }])
    refute_nil run.mismatch({ "$contains" => [{ "field" => "name" }] }, [{ "field" => "bio" }])
    refute_nil run.mismatch({ "$unknown" => 1 }, 1)
  end
end
