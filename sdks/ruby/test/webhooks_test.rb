# frozen_string_literal: true

require "json"
require "openssl"
require "stringio"
require_relative "test_helper"

# Webhook verification against deliveries signed by the Standard Webhooks reference library: its JavaScript
# implementation, whose signatures test/webhook_vectors.mjs fixes in test/webhook_vectors.json.
class WebhooksTest < Minitest::Test
  include TestHelpers

  VECTORS = JSON.parse(File.read(File.expand_path("webhook_vectors.json", __dir__)))
  EVENT_ID = "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1"
  NOW = Time.utc(2026, 11, 20, 9, 30, 5)

  def self.secret_of(label, prefixed: true)
    "#{prefixed ? 'whsec_' : ''}#{[OpenSSL::Digest::SHA256.digest(label)].pack('m0')}"
  end

  SECRET = secret_of("agentry webhook test vectors: the endpoint")

  def verify_case(vector)
    Agentry::Webhooks.verify(vector["payload"], vector["headers"],
                             secret: self.class.secret_of(vector["secretLabel"], prefixed: vector["prefixed"]),
                             now: vector["now"])
  end

  def reason_of(&block)
    error = assert_raises(Agentry::WebhookVerificationError, &block)
    assert_kind_of Agentry::Error, error
    error.reason
  end

  def test_gives_the_reference_result_for_every_vector
    assert_operator VECTORS["cases"].size, :>=, 18
    VECTORS["cases"].each do |vector|
      if vector["expect"] == "ok"
        assert verify_case(vector), vector["name"]
      else
        assert_equal vector["expect"].to_sym, reason_of { verify_case(vector) }, vector["name"]
      end
    end
  end

  def test_signs_exactly_as_the_reference_does
    signed = VECTORS["cases"].select { |v| v["expect"] == "ok" && !v["headers"]["webhook-signature"].include?(" ") }
    refute_empty signed
    signed.each do |vector|
      headers = vector["headers"]
      ours = Agentry::Webhooks.sign(vector["payload"], secret: self.class.secret_of(vector["secretLabel"]),
                                                       id: headers["webhook-id"],
                                                       timestamp: Integer(headers["webhook-timestamp"]))
      assert_equal headers, ours, vector["name"]
    end
  end

  def delivery(type: "agent.created", data: AGENT, at: NOW)
    body = JSON.generate({ "id" => EVENT_ID, "type" => type, "createdAt" => "2026-11-20T09:30:05.000Z", "data" => data })
    [body, Agentry::Webhooks.sign(body, secret: SECRET, id: EVENT_ID, timestamp: at)]
  end

  def test_reads_headers_in_any_case_as_symbols_in_rack_env_form_or_as_arrays
    body, headers = delivery
    variants = [
      headers.transform_keys(&:upcase),
      headers.transform_keys(&:to_sym),
      headers.transform_keys { |name| name.tr("-", "_").to_sym },
      headers.to_h { |name, value| ["HTTP_#{name.upcase.tr('-', '_')}", value] }.merge("rack.input" => StringIO.new),
      headers.transform_values { |value| [value] }
    ]
    variants.each { |variant| assert Agentry::Webhooks.verify(body, variant, secret: SECRET, now: NOW), variant.inspect }
  end

  def test_takes_the_body_as_an_io_and_leaves_it_readable
    body, headers = delivery
    io = StringIO.new(body)
    assert Agentry::Webhooks.verify(io, headers, secret: SECRET, now: NOW)
    assert_equal body, io.read
    assert Agentry::Webhooks.verify(body.b, headers, secret: SECRET, now: NOW)
  end

  def test_refuses_empty_headers_and_timestamps_that_are_not_unix_seconds
    body, headers = delivery
    assert_equal :missing_headers, reason_of { Agentry::Webhooks.verify(body, {}, secret: SECRET, now: NOW) }
    assert_equal :missing_headers,
                 reason_of { Agentry::Webhooks.verify(body, headers.merge("webhook-id" => ""), secret: SECRET, now: NOW) }
    ["soon", "1.5e9", "-1", "2026-11-20T09:30:05Z", "1 2"].each do |value|
      reason = reason_of do
        Agentry::Webhooks.verify(body, headers.merge("webhook-timestamp" => value), secret: SECRET, now: NOW)
      end
      assert_equal :invalid_timestamp, reason, value
    end
  end

  def test_uses_the_clock_and_the_tolerance_given
    body, headers = delivery(at: NOW - 3600)
    assert_equal :timestamp_too_old, reason_of { Agentry::Webhooks.verify(body, headers, secret: SECRET, now: NOW) }
    assert Agentry::Webhooks.verify(body, headers, secret: SECRET, now: NOW, tolerance: 7200)
    assert_equal :timestamp_too_old, reason_of { Agentry::Webhooks.verify(body, headers, secret: SECRET) }
    body, headers = delivery(at: Time.now)
    assert Agentry::Webhooks.verify(body, headers, secret: SECRET)
  end

  def test_ignores_signatures_it_cannot_read
    body, headers = delivery
    v1 = headers["webhook-signature"]
    ["v1", "v1,", "v1,!!!", "garbage", v1.delete_prefix("v1,")].each do |junk|
      reason = reason_of do
        Agentry::Webhooks.verify(body, headers.merge("webhook-signature" => junk), secret: SECRET, now: NOW)
      end
      assert_equal :no_signature, reason, junk
      assert Agentry::Webhooks.verify(body, headers.merge("webhook-signature" => "#{junk} #{v1}"), secret: SECRET,
                                                                                                  now: NOW)
    end
    assert Agentry::Webhooks.verify(body, headers.merge("webhook-signature" => "v1,#{'A' * 43}=, #{v1}"),
                                    secret: SECRET, now: NOW)
  end

  def test_reports_a_bad_secret_or_tolerance_as_a_usage_error
    body, headers = delivery
    ["", "whsec_", "whsec_not base64!", nil].each do |secret|
      error = assert_raises(Agentry::Error) { Agentry::Webhooks.verify(body, headers, secret: secret, now: NOW) }
      refute_kind_of Agentry::WebhookVerificationError, error
    end
    assert_raises(Agentry::Error) { Agentry::Webhooks.verify(body, headers, secret: SECRET, tolerance: -1) }
    assert_raises(Agentry::Error) { Agentry::Webhooks.sign(body, secret: SECRET, id: "") }
  end

  def test_unwrap_returns_the_event_with_its_data_typed
    event = Agentry::Webhooks.unwrap(*delivery, secret: SECRET, now: NOW)
    assert_instance_of Agentry::Webhooks::Event, event
    assert_equal EVENT_ID, event.id
    assert_equal Agentry::Webhooks::EventType::AGENT_CREATED, event.type
    assert_equal Time.utc(2026, 11, 20, 9, 30, 5), event.created_at
    assert_equal Agentry::Models::Agent.from_wire(AGENT), event.data

    %w[agent.updated agent.status_changed].each do |type|
      assert_equal "Ada", Agentry::Webhooks.unwrap(*delivery(type: type), secret: SECRET, now: NOW).data.name
    end
    deleted = Agentry::Webhooks.unwrap(*delivery(type: "agent.deleted", data: { "id" => "agt_1" }), secret: SECRET, now: NOW)
    assert_equal Agentry::Webhooks::AgentDeletedData.new(id: "agt_1"), deleted.data
    completed = Agentry::Webhooks.unwrap(*delivery(type: "message.completed", data: REPLY), secret: SECRET, now: NOW)
    assert_instance_of Agentry::Models::Reply, completed.data
    assert_equal 45, completed.data.usage.total_tokens
    failed = { "agentId" => "agt_1", "messageId" => "msg_1", "code" => "MODEL_ERROR", "message" => "No." }
    failed = Agentry::Webhooks.unwrap(*delivery(type: "message.failed", data: failed), secret: SECRET, now: NOW)
    assert_equal "MODEL_ERROR", failed.data.code
    assert_equal "msg_1", failed.data.message_id
    test = Agentry::Webhooks.unwrap(*delivery(type: "webhook.test", data: { "note" => "hi" }), secret: SECRET, now: NOW)
    assert_equal({ note: "hi" }, test.data)
  end

  def test_unwrap_supports_pattern_matching
    event = Agentry::Webhooks.unwrap(*delivery(type: "message.completed", data: REPLY), secret: SECRET, now: NOW)
    matched =
      case event
      in { type: "message.completed", data: { agent_id:, text: } } then "#{agent_id}: #{text}"
      else nil
      end
    assert_equal "#{AGENT['id']}: Hello there.", matched
  end

  def test_unwrap_returns_events_of_unknown_types_as_they_came
    event = Agentry::Webhooks.unwrap(*delivery(type: "agent.renamed", data: { "x" => [1] }), secret: SECRET, now: NOW)
    assert_equal "agent.renamed", event.type
    assert_equal({ x: [1] }, event.data)
  end

  def test_unwrap_verifies_before_parsing_and_refuses_a_body_that_is_not_an_event
    _, headers = delivery
    assert_equal :signature_mismatch,
                 reason_of { Agentry::Webhooks.unwrap("{not json", headers, secret: SECRET, now: NOW) }
    ["{not json", "[]", "null", '{"type":"agent.created"}'].each do |body|
      headers = Agentry::Webhooks.sign(body, secret: SECRET, id: EVENT_ID, timestamp: NOW)
      assert_equal :invalid_payload, reason_of { Agentry::Webhooks.unwrap(body, headers, secret: SECRET, now: NOW) }, body
    end
  end

  def test_is_on_the_client_too
    client = Agentry::Client.new(api_key: "agentry_sk_test")
    assert_same Agentry::Webhooks, client.webhooks
    assert_equal EVENT_ID, client.webhooks.unwrap(*delivery, secret: SECRET, now: NOW).id
  end
end
