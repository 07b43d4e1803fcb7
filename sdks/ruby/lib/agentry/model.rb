# frozen_string_literal: true

require "json"
require "time"

module Agentry
  # Base class of the API's models (Agentry::Models::Agent, Reply, ApiKey, ...). A model has a snake_case reader
  # per field of its schema, converts from and to the API's JSON (camelCase names, ISO 8601 timestamps), and
  # supports pattern matching:
  #
  #   case agent
  #   in {status: "error", status_reason: {code:}} then warn "agent failed: #{code}"
  #   in {status: "active"} then send_it
  #   end
  #
  # Every Hash a model gives back has Symbol keys: free-form objects (+personality+, a plugin's +config+) all the
  # way down, and keys a model does not declare (from a newer API version, or the free-form keys of +settings+),
  # which are kept under their JSON names: <tt>agent.personality[:tone]</tt>, <tt>agent.settings[:theme]</tt>.
  # Requests take String or Symbol keys alike, so a Hash sent comes back equal when its keys were Symbols.
  class Model
    # @api private
    Field = Struct.new(:name, :wire, :type, :required, :sensitive, keyword_init: true)

    class << self
      # The declared fields, by snake_case name.
      def fields
        @fields ||= {}
      end

      # Builds the model from the API's JSON (a Hash with string keys, as JSON.parse gives).
      def from_wire(hash)
        instance = allocate
        instance.send(:load_wire, hash)
        instance
      end

      private

      # Declares a field: +name+ is the reader, +wire+ the JSON name, +type+ how to convert its value (see
      # Agentry::Model::Types).
      def field(name, wire, type, required: false, sensitive: false)
        fields[name] = Field.new(name: name, wire: wire, type: type, required: required, sensitive: sensitive)
        attr_reader name
      end
    end

    # Builds a model from snake_case keyword arguments, e.g. to pass as a request value:
    # <tt>Agentry::Models::PluginConfig.new(name: "calendar", enabled: false)</tt>.
    def initialize(**attributes)
      @extra = {}
      @present = {}
      attributes.each do |name, value|
        field = self.class.fields[name]
        raise ArgumentError, "#{self.class.name} has no field #{name.inspect}" unless field

        instance_variable_set(:"@#{name}", value)
        @present[field.wire] = true
      end
    end

    # The value of a field by its reader's name (Symbol) or JSON name (String); an undeclared key by its JSON name,
    # as a Symbol or a String.
    def [](key)
      field = key.is_a?(Symbol) ? self.class.fields[key] : self.class.fields.each_value.find { |f| f.wire == key }
      return public_send(field.name) if field

      @extra[key.to_sym]
    end

    # The fields as a Hash with snake_case Symbol keys (nested models as Hashes too); undeclared keys follow under
    # their JSON names, as Symbols.
    def to_h
      hash = self.class.fields.each_value.to_h { |field| [field.name, Types.to_h(public_send(field.name))] }
      @extra.each { |key, value| hash[key] = Types.to_h(value) }
      hash
    end

    # The model as the API's JSON: camelCase String keys, timestamps as ISO 8601 strings. Fields absent from the
    # JSON the model was read from, and not set since, are left out.
    def to_wire
      hash = {}
      self.class.fields.each_value do |field|
        value = public_send(field.name)
        next if value.nil? && !field.required && !@present[field.wire]

        hash[field.wire] = Types.to_wire(value)
      end
      @extra.each { |key, value| hash[key.to_s] = Types.to_wire(value) }
      hash
    end

    # The API's JSON of the model, as a String.
    def to_json(*args)
      to_wire.to_json(*args)
    end

    # Pattern matching on the fields and the undeclared keys (see the class's documentation).
    def deconstruct_keys(_keys)
      @extra.merge(self.class.fields.each_value.to_h { |field| [field.name, public_send(field.name)] })
    end

    def ==(other)
      other.class == self.class && other.to_wire == to_wire
    end
    alias eql? ==

    def hash
      [self.class, to_wire].hash
    end

    def inspect
      shown = self.class.fields.each_value.map do |field|
        value = public_send(field.name)
        "#{field.name}=#{field.sensitive && value ? '[REDACTED]' : value.inspect}"
      end
      shown.concat(@extra.map { |key, value| "#{key.inspect}=#{value.inspect}" })
      "#<#{self.class.name} #{shown.join(', ')}>"
    end
    alias to_s inspect

    private

    def load_wire(hash)
      @extra = {}
      @present = {}
      hash = {} unless hash.is_a?(Hash)
      known = {}
      self.class.fields.each_value do |field|
        known[field.wire] = true
        next unless hash.key?(field.wire)

        @present[field.wire] = true
        instance_variable_set(:"@#{field.name}", Types.decode(field.type, hash[field.wire]))
      end
      hash.each { |key, value| @extra[key.to_sym] = Types.symbolize(value) unless known[key] }
    end

    # How field values convert between JSON and Ruby. A type is a Symbol (+:string+, +:time+ for a date-time
    # string, +:integer+, +:number+, +:boolean+, +:json+ for any JSON), a String naming a model class of
    # Agentry::Models, or an Array: <tt>[:array, item]</tt>, <tt>[:map, value]</tt>, <tt>[:nullable, inner]</tt>,
    # <tt>[:union, variant, ...]</tt>, or <tt>[:keyed, [key, model], ...]</tt> for objects of several models, each
    # told by a key only its objects have (an export's messages and memories). Reading is lenient: a value of an unexpected shape is kept as it came (its
    # Hashes with Symbol keys), since the API may grow.
    module Types
      module_function

      def decode(type, value)
        return nil if value.nil?

        case type
        when :time then decode_time(value)
        when String then value.is_a?(Hash) ? Models.const_get(type, false).from_wire(value) : symbolize(value)
        when Array then decode_composite(type, value)
        else symbolize(value)
        end
      end

      def decode_composite(type, value)
        kind, *inner = type
        case kind
        when :array then value.is_a?(Array) ? value.map { |item| decode(inner[0], item) } : symbolize(value)
        when :map
          value.is_a?(Hash) ? value.to_h { |key, item| [key.to_sym, decode(inner[0], item)] } : symbolize(value)
        when :nullable then decode(inner[0], value)
        when :union
          variant = inner.find { |candidate| fits?(candidate, value) }
          variant ? decode(variant, value) : symbolize(value)
        when :keyed
          variant = value.is_a?(Hash) && inner.find { |key, _| value.key?(key) }
          variant ? decode(variant[1], value) : symbolize(value)
        else symbolize(value)
        end
      end

      # A JSON value with the keys of its Hashes, at any depth, as Symbols.
      def symbolize(value)
        case value
        when Hash then value.to_h { |key, item| [key.to_sym, symbolize(item)] }
        when Array then value.map { |item| symbolize(item) }
        else value
        end
      end

      # Whether a JSON value has the shape of a type, to pick a union's variant.
      def fits?(type, value)
        case type
        when :string, :time then value.is_a?(String)
        when :integer then value.is_a?(Integer)
        when :number then value.is_a?(Numeric)
        when :boolean then [true, false].include?(value)
        when :json then true
        when String then value.is_a?(Hash)
        when Array
          case type[0]
          when :array then value.is_a?(Array)
          when :map then value.is_a?(Hash)
          when :nullable then value.nil? || fits?(type[1], value)
          when :keyed then value.is_a?(Hash) && type.drop(1).any? { |key, _| value.key?(key) }
          else type.drop(1).any? { |variant| fits?(variant, value) }
          end
        else false
        end
      end

      def decode_time(value)
        value.is_a?(String) ? Time.iso8601(value) : value
      rescue ArgumentError
        value
      end

      # A Ruby value as the API's JSON: models and Times converted, Symbol keys and values as Strings.
      def to_wire(value)
        case value
        when Model then value.to_wire
        when Time then value.getutc.iso8601(3)
        when Hash then value.to_h { |key, item| [key.to_s, to_wire(item)] }
        when Array then value.map { |item| to_wire(item) }
        when Symbol then value.to_s
        else value
        end
      end

      def to_h(value)
        case value
        when Model then value.to_h
        when Hash then value.transform_values { |item| to_h(item) }
        when Array then value.map { |item| to_h(item) }
        else value
        end
      end
    end
  end
end
