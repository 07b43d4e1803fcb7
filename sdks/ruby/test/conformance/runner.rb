# frozen_string_literal: true

require "json"
require "net/http"
require "uri"

module Conformance
  # The Ruby runner of the cross-SDK conformance scenario (tools/conformance/scenario.json, format in
  # tools/conformance/README.md), after the TypeScript reference runner.
  class ScenarioRun
    # A scenario step that did not go as expected.
    class Failure < StandardError; end

    REFERENCE = /\A\$[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*\z/.freeze

    attr_reader :vars

    def initialize(scenario, launcher)
      @scenario = scenario
      @launcher = launcher
      @vars = { "launcher" => launcher }
    end

    # Runs one step and returns what did not match, one line each (none when the step passed). Raises Failure when
    # the step cannot run at all.
    def step(step)
      return control(step) if step.key?("control")

      spec = @scenario["clients"][step.fetch("client", "default")] or raise Failure, "unknown client #{step['client']}"
      spec = resolve(spec)
      client = build_client(spec)
      expect = resolve(step.fetch("expect", {})) || {}
      args = resolve(step.fetch("args", {}))
      @own_key = args["idempotencyKey"]
      counting = (expect.key?("requests") || expect.key?("requestLog")) && spec.key?("key")
      before = counting ? request_counts : nil

      outcome = run(step.fetch("call"), client, args)
      result = outcome.key?(:result) ? JSON.parse(JSON.generate(wire(outcome[:result]))) : nil
      error = outcome.key?(:error) ? error_form(outcome[:error]) : nil

      problems = []
      problems << "unexpected error: #{JSON.generate(error)}" if !expect.key?("error") && error
      if expect.key?("error")
        found = error ? mismatch(expect["error"], error, "error") : "error: expected an error, the call succeeded"
        problems << found if found
      end
      if expect.key?("result")
        found = mismatch(expect["result"], result, "result")
        problems << found if found
      end
      if expect.key?("rateLimit")
        state = client.last_rate_limit
        actual = state && { "limit" => state.limit, "remaining" => state.remaining, "reset" => state.reset_at.to_i }
        found = mismatch(expect["rateLimit"], actual, "rateLimit")
        problems << found if found
      end
      problems.concat(request_problems(expect, spec["key"], before)) if counting
      @vars[step["save"]] = result if step.key?("save") && problems.empty?
      problems
    end

    # Replaces every string value "$name.path" by the value it names; keys are left alone.
    def resolve(value)
      case value
      when String
        return value unless REFERENCE.match?(value)

        value[1..].split(".").reduce(@vars) do |current, part|
          if current.is_a?(Hash) && current.key?(part) then current[part]
          elsif current.is_a?(Array) && part.match?(/\A\d+\z/) && part.to_i < current.size then current[part.to_i]
          else raise Failure, "unresolved reference #{value}"
          end
        end
      when Array then value.map { |item| resolve(item) }
      when Hash then value.transform_values { |item| resolve(item) }
      else value
      end
    end

    # Where +actual+ fails to match +pattern+ (README, "Patterns"), or nil when it matches.
    def mismatch(pattern, actual, path = "$")
      return actual.nil? ? nil : "#{path}: expected null, got #{JSON.generate(actual)}" if pattern.nil?

      case pattern
      when Array
        return "#{path}: expected an array, got #{JSON.generate(actual)}" unless actual.is_a?(Array)
        if actual.size != pattern.size
          return "#{path}: expected #{pattern.size} items, got #{actual.size}: #{JSON.generate(actual)}"
        end

        pattern.each_with_index do |item, index|
          found = mismatch(item, actual[index], "#{path}[#{index}]")
          return found if found
        end
        nil
      when Hash
        return operators(pattern, actual, path) if !pattern.empty? && pattern.keys.all? { |key| key.start_with?("$") }
        return "#{path}: expected an object, got #{JSON.generate(actual)}" unless actual.is_a?(Hash)

        pattern.each do |key, item|
          found = mismatch(item, actual[key], "#{path}.#{key}")
          return found if found
        end
        nil
      else
        equal = pattern.is_a?(Numeric) && actual.is_a?(Numeric) ? pattern == actual : pattern.eql?(actual)
        equal ? nil : "#{path}: expected #{JSON.generate(pattern)}, got #{JSON.generate(actual)}"
      end
    end

    private

    def operators(pattern, actual, path)
      pattern.each do |operator, operand|
        fail = ->(what) { "#{path}: #{what}, got #{JSON.generate(actual)}" }
        case operator
        when "$regex"
          return fail.call("expected /#{operand}/") unless actual.is_a?(String) && Regexp.new(operand).match?(actual)
        when "$type"
          type = type_of(actual)
          return fail.call("expected #{operand}") unless type == operand || (operand == "number" && type == "integer")
        when "$gte", "$lte", "$gt", "$lt"
          comparison = { "$gte" => :>=, "$lte" => :<=, "$gt" => :>, "$lt" => :< }.fetch(operator)
          return fail.call("expected #{operator} #{operand}") unless actual.is_a?(Numeric) && actual.public_send(comparison, operand)
        when "$length"
          return fail.call("expected length #{operand}") unless (actual.is_a?(Array) || actual.is_a?(String)) && actual.size == operand
        when "$contains"
          return fail.call("expected an array") unless actual.is_a?(Array)

          operand.each do |wanted|
            return fail.call("expected an item matching #{JSON.generate(wanted)}") unless actual.any? { |item| mismatch(wanted, item).nil? }
          end
        else
          return "#{path}: unknown operator #{operator}"
        end
      end
      nil
    end

    def type_of(value)
      case value
      when nil then "null"
      when Array then "array"
      when Hash then "object"
      when String then "string"
      when true, false then "boolean"
      when Integer then "integer"
      when Float then value.finite? && value == value.floor ? "integer" : "number"
      else value.class.name
      end
    end

    def build_client(spec)
      options = { base_url: @launcher["baseURL"] }
      options[:api_key] = spec.key?("key") ? @launcher["keys"].fetch(spec["key"]) : spec["apiKey"]
      options[:max_retries] = spec["maxRetries"] if spec.key?("maxRetries")
      options[:max_retry_delay] = spec["maxRetryDelayMs"] / 1000.0 if spec.key?("maxRetryDelayMs")
      options[:timeout] = spec["timeoutMs"] / 1000.0 if spec.key?("timeoutMs")
      Agentry::Client.new(**options)
    end

    # The scenario's operations, each mapped to this SDK's call.
    def run(call, client, args)
      return stream_operation(client, args) if call == "agents.messages.stream"
      return export_operation(client, args) if call == "users.export"

      { result: operation(call, client, args) }
    rescue Agentry::Error => e
      { error: e }
    end

    def operation(call, client, args)
      agents = client.agents
      messages = agents.messages
      case call
      when "agents.create" then invoke(agents, :create, [], args["body"])
      when "agents.get" then agents.get(args["agentId"])
      when "agents.update" then invoke(agents, :update, [args["agentId"]], args["body"])
      when "agents.delete" then agents.delete(args["agentId"], request_options: own)
      when "agents.list"
        page = invoke(agents, :list, [], args["query"])
        { "data" => page.data, "pagination" => page.pagination, "hasNextPage" => page.next_page? }
      when "agents.listPages"
        invoke(agents, :list, [], args["query"]).each_page.map { |page| { "data" => page.data, "pagination" => page.pagination } }
      when "agents.listAll" then invoke(agents, :list, [], args["query"]).to_a
      when "agents.messages.send" then invoke(messages, :create, [args["agentId"]], args["body"])
      when "agents.messages.streamText" then invoke(messages, :stream, [args["agentId"]], args["body"]).text
      when "agents.messages.streamFinalMessage"
        invoke(messages, :stream, [args["agentId"]], args["body"]).final_message
      when "apiKeys.create" then invoke(client.api_keys, :create, [], args["body"])
      when "apiKeys.list" then client.api_keys.list
      when "apiKeys.revoke" then client.api_keys.revoke(args["keyId"], request_options: own)
      else history_operation(call, client, args)
      end
    end

    # History, usage, character files and webhook endpoints.
    def history_operation(call, client, args)
      agents = client.agents
      case call
      when "agents.messages.list" then first_page(invoke(agents.messages, :list, [args["agentId"]], args["query"]))
      when "agents.messages.listAll" then invoke(agents.messages, :list, [args["agentId"]], args["query"]).to_a
      when "agents.messages.get" then agents.messages.get(args["agentId"], args["messageId"])
      when "agents.messages.sendBackground"
        invoke(agents.messages, :create_background, [args["agentId"]], args["body"])
      when "agents.messages.getBackground" then agents.messages.get_background(args["agentId"], args["messageId"])
      when "agents.messages.waitForBackground"
        agents.messages.wait_for_background(args["agentId"], args["messageId"], poll_interval: 0.05, max_wait: 30)
      when "agents.conversations.list"
        first_page(invoke(agents.conversations, :list, [args["agentId"]], args["query"]))
      when "agents.conversations.listAll"
        invoke(agents.conversations, :list, [args["agentId"]], args["query"]).to_a
      when "agents.conversations.delete"
        agents.conversations.delete(args["agentId"], args["conversationId"], request_options: own)
      when "users.erase" then client.users.erase(args["userId"], request_options: own)
      when "usage.get" then invoke(client.usage, :get, [], args["query"])
      when "agents.usage.get" then invoke(agents.usage, :get, [args["agentId"]], args["query"])
      when "agents.importCharacter"
        agents.import_character(args["body"], dry_run: args["dryRun"] == true, request_options: own)
      when "agents.exportCharacter" then agents.export_character(args["agentId"])
      else endpoint_operation(call, client, args)
      end
    end

    def endpoint_operation(call, client, args)
      endpoints = client.webhook_endpoints
      case call
      when "webhookEndpoints.create" then invoke(endpoints, :create, [], args["body"])
      when "webhookEndpoints.list" then endpoints.list
      when "webhookEndpoints.get" then endpoints.get(args["webhookId"])
      when "webhookEndpoints.update" then invoke(endpoints, :update, [args["webhookId"]], args["body"])
      when "webhookEndpoints.delete" then endpoints.delete(args["webhookId"], request_options: own)
      when "webhookEndpoints.rotateSecret" then endpoints.rotate_secret(args["webhookId"], request_options: own)
      when "webhookEndpoints.sendTestEvent" then endpoints.send_test_event(args["webhookId"], request_options: own)
      when "webhookEndpoints.deliveries.list"
        first_page(invoke(endpoints.deliveries, :list, [args["webhookId"]], args["query"]))
      when "webhookEndpoints.deliveries.listAll"
        invoke(endpoints.deliveries, :list, [args["webhookId"]], args["query"]).to_a
      when "webhookEndpoints.deliveries.redeliver"
        endpoints.deliveries.redeliver(args["webhookId"], args["deliveryId"], request_options: own)
      else plugin_operation(call, client, args)
      end
    end

    # The plugin catalogue and agents' secrets.
    def plugin_operation(call, client, args)
      secrets = client.agents.secrets
      case call
      when "plugins.list" then client.plugins.list
      when "agents.secrets.set" then invoke(secrets, :set, [args["agentId"], args["name"]], args["body"])
      when "agents.secrets.list" then secrets.list(args["agentId"])
      when "agents.secrets.delete" then secrets.delete(args["agentId"], args["name"], request_options: own)
      else raise Failure, "unknown operation #{call}"
      end
    end

    def first_page(page)
      { "data" => page.data, "pagination" => page.pagination, "hasNextPage" => page.next_page? }
    end

    # An export's result is what it yielded before it ended, even when it ended in an error.
    def export_operation(client, args)
      messages = []
      client.users.export(args["userId"]) { |message| messages << message }
      { result: messages }
    rescue Agentry::Error => e
      { result: messages, error: e }
    end

    # A stream's result is what was received before it ended, even when it ended in an error.
    def stream_operation(client, args)
      events = []
      text = +""
      begin
        invoke(client.agents.messages, :stream, [args["agentId"]], args["body"]).each do |event|
          events << event
          text << event.data.text if event.type == "message.delta"
        end
        { result: { "events" => events, "text" => text } }
      rescue Agentry::Error => e
        { result: { "events" => events, "text" => text }, error: e }
      end
    end

    # Calls +method+ with the REST API's JSON fields as its snake_case keyword arguments; fields the method has no
    # keyword for (a scenario sends an unknown field on purpose) go as +extra_body+.
    def invoke(resource, method, positional, fields)
      keywords = resource.method(method).parameters.filter_map { |kind, name| name if %i[key keyreq].include?(kind) }
      known = {}
      extra = {}
      (fields || {}).each do |name, value|
        snake = name.gsub(/([a-z0-9])([A-Z])/, '\1_\2').downcase.to_sym
        keywords.include?(snake) ? known[snake] = value : extra[name] = value
      end
      options = own || {}
      options = options.merge(extra_body: extra) unless extra.empty?
      known[:request_options] = options unless options.empty?
      resource.public_send(method, *positional, **known)
    end

    # A result in the REST API's JSON form.
    def wire(value)
      case value
      when Agentry::StreamEvent then value.to_wire
      when Array then value.map { |item| wire(item) }
      when Hash then value.transform_values { |item| wire(item) }
      else Agentry::Model::Types.to_wire(value)
      end
    end

    def error_form(error)
      api = error.is_a?(Agentry::APIError) ? error : nil
      {
        # The base class is the scenario's AgentryError: the SDK refused an answer or an argument.
        "type" => error.instance_of?(Agentry::Error) ? "AgentryError" : error.class.name.split("::").last,
        "status" => api&.status,
        "code" => api&.code,
        "message" => error.message,
        "requestId" => api&.request_id,
        "details" => api&.details&.map(&:to_wire),
        "retryAfter" => api&.retry_after
      }
    end

    def control(step)
      uri = URI("#{@launcher['controlURL']}/#{step['control']}")
      response = Net::HTTP.post(uri, JSON.generate(resolve(step.fetch("body", {}))), "content-type" => "application/json")
      raise Failure, "control #{step['control']}: #{response.code} #{response.body}" unless response.is_a?(Net::HTTPSuccess)

      []
    end

    # The launcher's request counts; with +after+, also its log of the requests after the +after+-th.
    def request_counts(after = nil)
      query = after.nil? ? "" : "?after=#{after}"
      JSON.parse(Net::HTTP.get(URI("#{@launcher['controlURL']}/requests#{query}")))
    end

    # What the requests the step's key made, counted and logged by the launcher, tell against +expect+.
    def request_problems(expect, key, before)
      after = request_counts(before.fetch("total"))
      made = after.fetch("byKey").fetch(key, 0) - before.fetch("byKey").fetch(key, 0)
      problems = []
      if expect.key?("requests") && made != expect["requests"]
        problems << "requests: expected #{expect['requests']}, the server saw #{made}"
      end
      if expect.key?("requestLog")
        log = after.fetch("log", []).select { |entry| entry["key"] == key }
        found = mismatch(expect["requestLog"], log, "requestLog")
        problems << found if found
      end
      problems
    end

    # The request options of a write of the step: its own Idempotency-Key, when the step gives one.
    def own
      @own_key.nil? ? nil : { idempotency_key: @own_key }
    end
  end
end
