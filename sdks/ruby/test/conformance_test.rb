# frozen_string_literal: true

require_relative "test_helper"
require_relative "conformance/launcher"
require_relative "conformance/runner"

# The cross-SDK conformance scenario, every step, against a live service spawned for this run.
class ConformanceTest < Minitest::Test
  SCENARIO_PATH = File.expand_path("../../../tools/conformance/scenario.json", __dir__)
  SCENARIO = JSON.parse(File.read(SCENARIO_PATH))

  # Steps build on each other, so they run in order and a failure stops the ones after it.
  i_suck_and_my_tests_are_order_dependent!

  class << self
    attr_accessor :failed

    def run_state
      @run_state ||= begin
        launcher = Conformance::Launcher.start
        Minitest.after_run { launcher.stop }
        { launcher: launcher, run: Conformance::ScenarioRun.new(SCENARIO, launcher.info) }
      end
    end
  end

  def test_000_the_launcher_names_the_scenario_it_serves_and_every_key_the_scenario_uses
    info = self.class.run_state[:launcher].info
    assert_equal File.realpath(SCENARIO_PATH), File.realpath(info["scenario"])
    SCENARIO["clients"].each_value do |client|
      assert_match(/\Aagentry_sk_/, info["keys"][client["key"]]) if client.key?("key")
    end
  end

  SCENARIO["steps"].each_with_index do |step, index|
    define_method(format("test_%03d_%s", index + 1, step["name"])) do
      flunk "not run: the earlier step \"#{self.class.failed}\" failed" if self.class.failed
      problems = begin
        self.class.run_state[:run].step(step)
      rescue StandardError
        self.class.failed = step["name"]
        raise
      end
      self.class.failed = step["name"] unless problems.empty?
      assert_empty problems, "step \"#{step['name']}\":\n  #{problems.join("\n  ")}"
    end
  end
end
