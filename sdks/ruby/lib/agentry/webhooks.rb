# frozen_string_literal: true

require "json"
require "openssl"

module Agentry
  # Verification of the webhook deliveries the service sends (Standard Webhooks: HMAC-SHA256 over
  # <tt>id.timestamp.body</tt>). A receiver needs the endpoint's secret (+whsec_...+), not an API key:
  #
  #   event = Agentry::Webhooks.unwrap(request.body.read, request.env, secret: ENV.fetch("AGENTRY_WEBHOOK_SECRET"))
  #   case event
  #   in {type: "message.completed", data: {agent_id:, text:}} then puts "#{agent_id}: #{text}"
  #   in {type: "agent.deleted", data: {id:}} then forget(id)
  #   else # other events
  #   end
  #
  # Pass the body exactly as received, never JSON parsed and generated again: its signature would not match.
  # <tt>client.webhooks</tt> is this module too.
  module Webhooks
    # Seconds a delivery's +webhook-timestamp+ may be from the receiver's clock, either way: 5 minutes.
    DEFAULT_TOLERANCE = 300

    # The types of the events the service delivers.
    module EventType
      AGENT_CREATED = "agent.created"
      AGENT_UPDATED = "agent.updated"
      AGENT_STATUS_CHANGED = "agent.status_changed"
      AGENT_DELETED = "agent.deleted"
      MESSAGE_COMPLETED = "message.completed"
      MESSAGE_FAILED = "message.failed"
      WEBHOOK_TEST = "webhook.test"
      # Every value.
      ALL = [AGENT_CREATED, AGENT_UPDATED, AGENT_STATUS_CHANGED, AGENT_DELETED, MESSAGE_COMPLETED, MESSAGE_FAILED,
             WEBHOOK_TEST].freeze
    end

    # The data of +agent.deleted+.
    class AgentDeletedData < Agentry::Model
      # The deleted agent's id.
      field :id, "id", :string, required: true
    end

    # The data of +message.failed+: a send that ended with an error instead of a reply.
    class MessageFailedData < Agentry::Model
      field :agent_id, "agentId", :string, required: true
      field :message_id, "messageId", :string, required: true
      # The error code of the failure, e.g. <tt>"MODEL_ERROR"</tt>.
      field :code, "code", :string, required: true
      field :message, "message", :string, required: true
    end

    # An event delivered to a webhook endpoint, as Webhooks.unwrap returns it. +data+ depends on +type+: an
    # Agentry::Models::Agent for +agent.created+, +agent.updated+ and +agent.status_changed+; an AgentDeletedData
    # for +agent.deleted+; an Agentry::Models::Reply for +message.completed+; a MessageFailedData for
    # +message.failed+; a Hash with Symbol keys for +webhook.test+ and for types newer than this library.
    class Event < Agentry::Model
      # +evt_+ and a ULID; also the +webhook-id+ header, the same on every retry of the event.
      field :id, "id", :string, required: true
      # One of EventType, or a type newer than this library.
      field :type, "type", :string, required: true
      # When the event happened (a Time).
      field :created_at, "createdAt", :time, required: true
      field :data, "data", :json, required: true

      # The model class of each type's data.
      DATA = {
        EventType::AGENT_CREATED => "Agent", EventType::AGENT_UPDATED => "Agent",
        EventType::AGENT_STATUS_CHANGED => "Agent", EventType::AGENT_DELETED => AgentDeletedData,
        EventType::MESSAGE_COMPLETED => "Reply", EventType::MESSAGE_FAILED => MessageFailedData
      }.freeze
      private_constant :DATA

      private

      def load_wire(hash)
        super
        model = DATA[@type]
        data = hash["data"]
        return unless model && data.is_a?(Hash)

        @data = (model.is_a?(String) ? Models.const_get(model, false) : model).from_wire(data)
      end
    end

    HEADERS = %w[webhook-id webhook-timestamp webhook-signature].freeze
    private_constant :HEADERS

    module_function

    # Checks that a delivery was signed with +secret+ and is recent; returns +true+, or raises
    # Agentry::WebhookVerificationError. Of the signatures in +webhook-signature+ (several while a secret is being
    # rotated), one +v1+ signature matching is enough; other versions are ignored. Signatures are compared in
    # constant time.
    #
    # - +payload+: the body exactly as received, a String (Rack: <tt>request.body.read</tt>) or an IO to read.
    # - +headers+: the request's headers: a Hash with String or Symbol keys in any case, or a Rack env
    #   (+HTTP_WEBHOOK_ID+), or anything whose +each+ yields name and value.
    # - +secret+: the endpoint's secret, +whsec_...+, with or without the prefix.
    # - +tolerance+: seconds +webhook-timestamp+ may be from +now+, either way (300).
    # - +now+: the current time, a Time or Unix seconds; for tests.
    #
    # Raises Agentry::Error (not a WebhookVerificationError) when the secret is not a +whsec_+ secret.
    def verify(payload, headers, secret:, tolerance: DEFAULT_TOLERANCE, now: Time.now)
      unless tolerance.is_a?(Numeric) && tolerance >= 0
        raise Error, "tolerance must be a number of seconds of at least 0; got #{tolerance.inspect}."
      end

      key = decode_secret(secret)
      found = read_headers(headers)
      missing = HEADERS.reject { |name| found[name] && !found[name].empty? }
      fail_with(:missing_headers, "Missing webhook header: #{missing.join(', ')}.") unless missing.empty?

      id, timestamp, signatures = found.values_at(*HEADERS)
      check_timestamp(timestamp, tolerance, now.to_f)
      expected = OpenSSL::HMAC.digest("SHA256", key, "#{id}.#{timestamp}.".b + bytes(payload))
      candidates = 0
      signatures.split(" ").each do |token|
        # Several header lines joined by a proxy come as "v1,a, v1,b".
        version, encoded = token.delete_suffix(",").split(",", 2)
        next unless version == "v1" && (signature = decode64(encoded))

        candidates += 1
        return true if signature.bytesize == expected.bytesize &&
                       OpenSSL.fixed_length_secure_compare(signature, expected)
      end
      fail_with(:no_signature, "The webhook-signature header holds no v1 signature.") if candidates.zero?
      fail_with(:signature_mismatch,
                "No webhook signature matches: check the secret, and verify the raw body as received.")
    end

    # Verifies a delivery (as #verify does) and returns its Event, +data+ typed by +type+ (see Event). Raises
    # Agentry::WebhookVerificationError when it does not verify, or (+:invalid_payload+) when its body is not an
    # event.
    #
    #   event = Agentry::Webhooks.unwrap(raw_body, request.env, secret: secret)
    #   puts event.data.text if event.type == Agentry::Webhooks::EventType::MESSAGE_COMPLETED
    def unwrap(payload, headers, secret:, tolerance: DEFAULT_TOLERANCE, now: Time.now)
      body = bytes(payload)
      verify(body, headers, secret: secret, tolerance: tolerance, now: now)
      begin
        hash = JSON.parse(body.dup.force_encoding(Encoding::UTF_8))
      rescue JSON::ParserError
        fail_with(:invalid_payload, "The webhook body is not JSON.")
      end
      unless hash.is_a?(Hash) && hash["id"].is_a?(String) && hash["type"].is_a?(String)
        fail_with(:invalid_payload, "The webhook body is not an event.")
      end

      Event.from_wire(hash)
    end

    # Signs a payload as the service does and returns the headers of such a delivery (a Hash), to test a
    # receiver without a running service:
    #
    #   headers = Agentry::Webhooks.sign(body, secret: secret, id: "evt_1")
    #
    # +id+ is the +webhook-id+ (the event's id); +timestamp+ a Time or Unix seconds (default: now).
    def sign(payload, secret:, id:, timestamp: Time.now)
      raise Error, "A webhook id is required to sign." unless id.is_a?(String) && !id.empty?

      seconds = timestamp.to_i.to_s
      digest = OpenSSL::HMAC.digest("SHA256", decode_secret(secret), "#{id}.#{seconds}.".b + bytes(payload))
      { "webhook-id" => id, "webhook-timestamp" => seconds, "webhook-signature" => "v1,#{[digest].pack('m0')}" }
    end

    def decode_secret(secret)
      raise Error, "The webhook secret must be a String." unless secret.is_a?(String)

      encoded = secret.delete_prefix("whsec_")
      key = decode64(encoded + ("=" * (-encoded.length % 4)))
      return key if key && !key.empty?

      raise Error, "The webhook secret must be the endpoint's secret: whsec_ followed by base64."
    end

    def decode64(text)
      return nil unless text&.match?(%r{\A[A-Za-z0-9+/]+={0,2}\z})

      text.unpack1("m0")
    rescue ArgumentError
      nil
    end

    def read_headers(headers)
      found = {}
      headers.each do |name, value|
        key = name.to_s.downcase
        key = key.delete_prefix("http_").tr("_", "-")
        next unless HEADERS.include?(key) && !value.nil?

        text = Array(value).join(" ")
        found[key] = found.key?(key) ? "#{found[key]} #{text}" : text
      end
      found.transform_values(&:strip)
    end

    def check_timestamp(header, tolerance, now)
      unless header.match?(/\A[0-9]{1,15}\z/)
        fail_with(:invalid_timestamp, "webhook-timestamp is not a Unix time in seconds.")
      end

      age = now - Integer(header, 10)
      fail_with(:timestamp_too_old, "The webhook timestamp is too old.") if age > tolerance
      fail_with(:timestamp_too_new, "The webhook timestamp is too far in the future.") if age < -tolerance
    end

    def bytes(payload)
      if payload.respond_to?(:read)
        text = payload.read
        payload.rewind if payload.respond_to?(:rewind)
        payload = text
      end
      raise Error, "The webhook payload must be the raw body: a String or an IO." unless payload.is_a?(String)

      payload.b
    end

    def fail_with(reason, message)
      raise WebhookVerificationError.new(message, reason: reason)
    end

    private_class_method :decode_secret, :decode64, :read_headers, :check_timestamp, :bytes, :fail_with
  end
end
