# frozen_string_literal: true

# Generated from sdks/openapi.json by sdks/generator (src/ruby.ts) — do not edit.
# Regenerate with: pnpm --filter @agentry/sdk-generator generate

module Agentry
  # The API's models and enums.
  module Models
    # `active` (new agents), `inactive` (refuses messages), or `error` (set by the service after a lasting
    # provider failure; cleared by an update of `status`, `modelProvider`, `model` or `settings`, or by
    # the next successful message).
    module AgentStatus
      ACTIVE = "active"
      INACTIVE = "inactive"
      ERROR = "error"
      # Every value.
      ALL = [ACTIVE, INACTIVE, ERROR].freeze
    end

    # `pending`: the reply is being generated (only the ids are known); `requires_action`: paused before
    # tool calls that wait for a person's approval (see `pendingToolCalls`; answer at `POST
    # …/messages/{messageId}/approve`); `completed`: every field of the reply is here; `failed`: see
    # `error`; `cancelled`: stopped, either by a later message that interrupted it (every field of the
    # reply is here, with the text it had and `finishReason: "cancelled"`) or by the kill switch (`error`
    # says so, no reply).
    module BackgroundMessageStatus
      PENDING = "pending"
      REQUIRES_ACTION = "requires_action"
      COMPLETED = "completed"
      FAILED = "failed"
      CANCELLED = "cancelled"
      # Every value.
      ALL = [PENDING, REQUIRES_ACTION, COMPLETED, FAILED, CANCELLED].freeze
    end

    # An error code, as in the error envelope.
    module ErrorCode
      INVALID_REQUEST = "INVALID_REQUEST"
      UNAUTHORIZED = "UNAUTHORIZED"
      BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
      FORBIDDEN = "FORBIDDEN"
      INSUFFICIENT_QUOTA = "INSUFFICIENT_QUOTA"
      AGENT_NOT_FOUND = "AGENT_NOT_FOUND"
      CONVERSATION_NOT_FOUND = "CONVERSATION_NOT_FOUND"
      MESSAGE_NOT_FOUND = "MESSAGE_NOT_FOUND"
      STREAM_NOT_FOUND = "STREAM_NOT_FOUND"
      WEBHOOK_NOT_FOUND = "WEBHOOK_NOT_FOUND"
      DELIVERY_NOT_FOUND = "DELIVERY_NOT_FOUND"
      SECRET_NOT_FOUND = "SECRET_NOT_FOUND"
      API_KEY_NOT_FOUND = "API_KEY_NOT_FOUND"
      MEMORY_NOT_FOUND = "MEMORY_NOT_FOUND"
      DOCUMENT_NOT_FOUND = "DOCUMENT_NOT_FOUND"
      SCHEDULE_NOT_FOUND = "SCHEDULE_NOT_FOUND"
      MEMBER_NOT_FOUND = "MEMBER_NOT_FOUND"
      BUDGET_NOT_FOUND = "BUDGET_NOT_FOUND"
      NOT_FOUND = "NOT_FOUND"
      METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
      AGENT_INACTIVE = "AGENT_INACTIVE"
      IDEMPOTENCY_KEY_IN_USE = "IDEMPOTENCY_KEY_IN_USE"
      PRECONDITION_FAILED = "PRECONDITION_FAILED"
      CONVERSATION_BUSY = "CONVERSATION_BUSY"
      MESSAGE_NOT_AWAITING_APPROVAL = "MESSAGE_NOT_AWAITING_APPROVAL"
      APPROVAL_EXPIRED = "APPROVAL_EXPIRED"
      MEMBER_EXISTS = "MEMBER_EXISTS"
      LAST_OWNER = "LAST_OWNER"
      PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
      UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
      IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
      RATE_LIMIT_EXCEEDED = "RATE_LIMIT_EXCEEDED"
      INTERNAL_ERROR = "INTERNAL_ERROR"
      MODEL_ERROR = "MODEL_ERROR"
      AGENT_UNAVAILABLE = "AGENT_UNAVAILABLE"
      # Every value.
      ALL = [
        INVALID_REQUEST,
        UNAUTHORIZED,
        BUDGET_EXCEEDED,
        FORBIDDEN,
        INSUFFICIENT_QUOTA,
        AGENT_NOT_FOUND,
        CONVERSATION_NOT_FOUND,
        MESSAGE_NOT_FOUND,
        STREAM_NOT_FOUND,
        WEBHOOK_NOT_FOUND,
        DELIVERY_NOT_FOUND,
        SECRET_NOT_FOUND,
        API_KEY_NOT_FOUND,
        MEMORY_NOT_FOUND,
        DOCUMENT_NOT_FOUND,
        SCHEDULE_NOT_FOUND,
        MEMBER_NOT_FOUND,
        BUDGET_NOT_FOUND,
        NOT_FOUND,
        METHOD_NOT_ALLOWED,
        AGENT_INACTIVE,
        IDEMPOTENCY_KEY_IN_USE,
        PRECONDITION_FAILED,
        CONVERSATION_BUSY,
        MESSAGE_NOT_AWAITING_APPROVAL,
        APPROVAL_EXPIRED,
        MEMBER_EXISTS,
        LAST_OWNER,
        PAYLOAD_TOO_LARGE,
        UNSUPPORTED_MEDIA_TYPE,
        IDEMPOTENCY_KEY_REUSED,
        RATE_LIMIT_EXCEEDED,
        INTERNAL_ERROR,
        MODEL_ERROR,
        AGENT_UNAVAILABLE
      ].freeze
    end

    # Why generation stopped: `stop` (natural end), `length` (cut short: `maxTokens` reached or, on the
    # `local` provider, its reply time limit or a loop of repeated text), `content_filter` (the provider
    # withheld content), `other`, or `cancelled` (a later message to the conversation interrupted it with
    # `onConflict: "interrupt"`: the text is what was generated before).
    module FinishReason
      STOP = "stop"
      LENGTH = "length"
      CONTENT_FILTER = "content_filter"
      OTHER = "other"
      CANCELLED = "cancelled"
      # Every value.
      ALL = [STOP, LENGTH, CONTENT_FILTER, OTHER, CANCELLED].freeze
    end

    # The AI model provider. Unset: the server's default provider (`DEFAULT_MODEL_PROVIDER`), resolved
    # when a message is sent. Every provider this server has a client for is accepted, configured here or
    # not; one with no configuration (no `OPENAI_API_KEY`, say) is written with a `warnings` entry naming
    # the variable to set, and messages to the agent fail with `502 MODEL_ERROR` until it is set. Any
    # other value is refused with `400`.
    module ModelProvider
      OPENAI = "openai"
      ANTHROPIC = "anthropic"
      LOCAL = "local"
      # Every value.
      ALL = [OPENAI, ANTHROPIC, LOCAL].freeze
    end

    # What the member may do (docs/api/members.md, "Roles").
    module Role
      OWNER = "owner"
      ADMIN = "admin"
      DEVELOPER = "developer"
      VIEWER = "viewer"
      # Every value.
      ALL = [OWNER, ADMIN, DEVELOPER, VIEWER].freeze
    end

    # The Scope values.
    module Scope
      AGENTS_READ = "agents:read"
      AGENTS_WRITE = "agents:write"
      AGENTS_DELETE = "agents:delete"
      MESSAGES_SEND = "messages:send"
      KEYS_MANAGE = "keys:manage"
      HISTORY_READ = "history:read"
      HISTORY_DELETE = "history:delete"
      USAGE_READ = "usage:read"
      WEBHOOKS_MANAGE = "webhooks:manage"
      PLUGINS_MANAGE = "plugins:manage"
      MEMBERS_READ = "members:read"
      MEMBERS_WRITE = "members:write"
      BUDGETS_READ = "budgets:read"
      BUDGETS_WRITE = "budgets:write"
      AUDIT_READ = "audit:read"
      # Every value.
      ALL = [
        AGENTS_READ,
        AGENTS_WRITE,
        AGENTS_DELETE,
        MESSAGES_SEND,
        KEYS_MANAGE,
        HISTORY_READ,
        HISTORY_DELETE,
        USAGE_READ,
        WEBHOOKS_MANAGE,
        PLUGINS_MANAGE,
        MEMBERS_READ,
        MEMBERS_WRITE,
        BUDGETS_READ,
        BUDGETS_WRITE,
        AUDIT_READ
      ].freeze
    end

    # An agent, as Get, List, Create and Update return it.
    class Agent < Agentry::Model
      # @!attribute [r] id
      #   The agent's id: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] name
      #   Name of the agent: 1 to 200 characters once surrounding whitespace is trimmed; stored trimmed.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] bio
      #   Biographical statements about the agent.
      #   @return [Array<String>]
      field :bio, "bio", [:array, :string], required: true

      # @!attribute [r] personality
      #   Personality traits and communication style, as a JSON object.
      #   @return [Hash{Symbol => Object}]
      field :personality, "personality", :json, required: true

      # @!attribute [r] knowledge
      #   Areas of expertise and knowledge.
      #   @return [Array<String>]
      field :knowledge, "knowledge", [:array, :string], required: true

      # @!attribute [r] goals
      #   Objectives and motivations.
      #   @return [Array<String>]
      field :goals, "goals", [:array, :string], required: true

      # @!attribute [r] clients
      #   Platform integrations: a platform name, or an object with a `type` and that platform's
      #   configuration.
      #   @return [Array<String, ClientIntegration>]
      field :clients, "clients", [:array, [:union, :string, "ClientIntegration"]], required: true

      # @!attribute [r] settings
      #   Platform-specific configuration, as a JSON object. `temperature` and `maxTokens` tune generation,
      #   `fallbacks` names the models that answer when the agent's own cannot, `maxToolSteps` bounds the
      #   rounds of tool calls in a turn and `toolChoice` whether the first must call one; other keys are
      #   kept as given.
      #   @return [AgentSettings]
      field :settings, "settings", "AgentSettings", required: true

      # @!attribute [r] model_provider
      #   The AI model provider; `null`: the server's default, resolved when a message is sent. One of
      #   `openai`, `anthropic`, `local` (Models::ModelProvider).
      #   @return [String, nil]
      field :model_provider, "modelProvider", [:nullable, :string], required: true

      # @!attribute [r] model
      #   The model to use; `null`: the provider's default.
      #   @return [String, nil]
      field :model, "model", [:nullable, :string], required: true

      # @!attribute [r] plugins
      #   Plugin configurations: a plugin name (enabled, with its default config), or an object `{name,
      #   enabled?, config?}`. An enabled plugin must be one `GET /v1/plugins` lists and its `config` must
      #   satisfy that plugin's `configSchema`; otherwise `400 INVALID_REQUEST` naming `plugins[i]` or the
      #   config's field. A disabled plugin is kept as given, known or not, and does nothing.
      #   @return [Array<String, PluginConfig>]
      field :plugins, "plugins", [:array, [:union, :string, "PluginConfig"]], required: true

      # @!attribute [r] status
      #   `active` (new agents), `inactive` (refuses messages), or `error` (set by the service after a
      #   lasting provider failure; cleared by an update of `status`, `modelProvider`, `model` or
      #   `settings`, or by the next successful message). One of `active`, `inactive`, `error`
      #   (Models::AgentStatus).
      #   @return [String]
      field :status, "status", :string, required: true

      # @!attribute [r] status_reason
      #   @return [StatusReason, nil]
      field :status_reason, "statusReason", [:nullable, "StatusReason"], required: true

      # @!attribute [r] created_at
      #   When the agent was created.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] updated_at
      #   When the agent was last changed.
      #   @return [Time]
      field :updated_at, "updatedAt", :time, required: true

      # @!attribute [r] api_endpoint
      #   Absolute URL of the agent's messages endpoint.
      #   @return [String]
      field :api_endpoint, "apiEndpoint", :string, required: true
    end

    # The AgentDeleted object.
    class AgentDeleted < Agentry::Model
      # @!attribute [r] id
      #   The deleted agent's id: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end

    # The agent an import would create: its fields, with no id, status or times yet.
    class AgentDraft < Agentry::Model
      # @!attribute [r] name
      #   Name of the agent: 1 to 200 characters once surrounding whitespace is trimmed; stored trimmed.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] bio
      #   Biographical statements about the agent.
      #   @return [Array<String>]
      field :bio, "bio", [:array, :string], required: true

      # @!attribute [r] personality
      #   Personality traits and communication style, as a JSON object.
      #   @return [Hash{Symbol => Object}]
      field :personality, "personality", :json, required: true

      # @!attribute [r] knowledge
      #   Areas of expertise and knowledge.
      #   @return [Array<String>]
      field :knowledge, "knowledge", [:array, :string], required: true

      # @!attribute [r] goals
      #   Objectives and motivations.
      #   @return [Array<String>]
      field :goals, "goals", [:array, :string], required: true

      # @!attribute [r] clients
      #   Platform integrations: a platform name, or an object with a `type` and that platform's
      #   configuration.
      #   @return [Array<String, ClientIntegration>]
      field :clients, "clients", [:array, [:union, :string, "ClientIntegration"]], required: true

      # @!attribute [r] settings
      #   Platform-specific configuration, as a JSON object. `temperature` and `maxTokens` tune generation,
      #   `fallbacks` names the models that answer when the agent's own cannot, `maxToolSteps` bounds the
      #   rounds of tool calls in a turn and `toolChoice` whether the first must call one; other keys are
      #   kept as given.
      #   @return [AgentSettings]
      field :settings, "settings", "AgentSettings", required: true

      # @!attribute [r] model_provider
      #   The AI model provider; `null`: the server's default, resolved when a message is sent. One of
      #   `openai`, `anthropic`, `local` (Models::ModelProvider).
      #   @return [String, nil]
      field :model_provider, "modelProvider", [:nullable, :string], required: true

      # @!attribute [r] model
      #   The model to use; `null`: the provider's default.
      #   @return [String, nil]
      field :model, "model", [:nullable, :string], required: true

      # @!attribute [r] plugins
      #   Plugin configurations: a plugin name (enabled, with its default config), or an object `{name,
      #   enabled?, config?}`. An enabled plugin must be one `GET /v1/plugins` lists and its `config` must
      #   satisfy that plugin's `configSchema`; otherwise `400 INVALID_REQUEST` naming `plugins[i]` or the
      #   config's field. A disabled plugin is kept as given, known or not, and does nothing.
      #   @return [Array<String, PluginConfig>]
      field :plugins, "plugins", [:array, [:union, :string, "PluginConfig"]], required: true
    end

    # A run: a streamed or background message of the agent.
    class AgentRunListResponseDataItem < Agentry::Model
      # @!attribute [r] id
      #   The run's id, the cursor of this list: its reply's id, the same as `messageId`: `msg_` and a ULID.
      #   Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] message_id
      #   The reply's id (a background message's `messageId`), as `GET …/messages/{messageId}` and `GET
      #   …/messages/{messageId}/events` take it: `msg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :message_id, "messageId", :string, required: true

      # @!attribute [r] status
      #   `pending`: being generated; `requires_action`: paused until its tool calls are approved or refused
      #   (`POST /v1/agents/{agentId}/messages/{messageId}/approve`); `completed`: its reply is stored;
      #   `failed`: it ended with `error`; `cancelled`: stopped by `POST /v1/agents/{agentId}/runs/cancel`.
      #   One of `pending`, `requires_action`, `completed`, `failed`, `cancelled`
      #   (Models::BackgroundMessageStatus).
      #   @return [String]
      field :status, "status", :string, required: true

      # @!attribute [r] background
      #   Whether it was sent with `background: true` (else streamed).
      #   @return [Boolean]
      field :background, "background", :boolean, required: true

      # @!attribute [r] user_id
      #   The user id it was sent with; null when none.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The room id it was sent with; null when none.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true

      # @!attribute [r] created_at
      #   When it was sent.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] ended_at
      #   When it ended; null while pending.
      #   @return [Time, nil]
      field :ended_at, "endedAt", [:nullable, :time], required: true

      # @!attribute [r] error
      #   A failed or cancelled run's error, as its stream's `error` event gave it.
      #   @return [AgentRunListResponseDataItemError, nil]
      field :error, "error", [:nullable, "AgentRunListResponseDataItemError"], required: true

      # @!attribute [r] takeovers
      #   How many times another process took it over after the one generating it stopped.
      #   @return [Integer]
      field :takeovers, "takeovers", :integer, required: true
    end

    # A failed or cancelled run's error, as its stream's `error` event gave it.
    class AgentRunListResponseDataItemError < Agentry::Model
      # @!attribute [r] code
      #   @return [String]
      field :code, "code", :string, required: true

      # @!attribute [r] message
      #   @return [String]
      field :message, "message", :string, required: true
    end

    # Platform-specific configuration, as a JSON object. `temperature` and `maxTokens` tune generation;
    # other keys are kept as given.
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class AgentSettings < Agentry::Model
      # @!attribute [r] temperature
      #   Sampling temperature, 0 to 2. Unset or `null`: the provider's default.
      #   @return [Numeric, nil]
      field :temperature, "temperature", [:nullable, :number]

      # @!attribute [r] max_tokens
      #   The most tokens a reply may have, 1 to 8192. Unset or `null`: 1024, or the deployment's
      #   `LOCAL_MAX_TOKENS` (128 by default) on the `local` provider.
      #   @return [Integer, nil]
      field :max_tokens, "maxTokens", [:nullable, :integer]

      # @!attribute [r] max_tool_steps
      #   The most rounds of tool calls in one turn, 0 to 20 (0 offers the model no tools). After the last
      #   round the model answers without tools, so the turn ends in text. Unset or `null`: 5.
      #   @return [Integer, nil]
      field :max_tool_steps, "maxToolSteps", [:nullable, :integer]

      # @!attribute [r] tool_choice
      #   `required`: the model must call one of the agent's tools in the turn's first round (OpenAI's
      #   `tool_choice: required`, Anthropic's `tool_choice: any`, and for the local model a call its
      #   grammar forces); later rounds are `auto`. `auto`: the model decides. Has no effect when the agent
      #   offers no tools. Unset or `null`: `auto`. One of `auto`, `required`.
      #   @return [String, nil]
      field :tool_choice, "toolChoice", [:nullable, :string]

      # @!attribute [r] fallbacks
      #   Up to 3 models to answer with, in order, when the agent's own fails with a 503-class error (or a
      #   fallback fails with 502 or 503); the reply's `modelProvider` and `model` name the one that
      #   answered, and usage counts it. When every one fails, the agent's own failure is the answer. The
      #   agent's `status` reflects its own model only.
      #   @return [Array<AgentSettingsFallbacksItem>, nil]
      field :fallbacks, "fallbacks", [:nullable, [:array, "AgentSettingsFallbacksItem"]]
    end

    # Up to 3 models to answer with, in order, when the agent's own fails with a 503-class error (or a
    # fallback fails with 502 or 503); the reply's `modelProvider` and `model` name the one that answered,
    # and usage counts it. When every one fails, the agent's own failure is the answer. The agent's
    # `status` reflects its own model only.
    class AgentSettingsFallbacksItem < Agentry::Model
      # @!attribute [r] model_provider
      #   A provider, as for the agent's own `modelProvider`. One with no configuration here is accepted;
      #   when tried, it fails as `MODEL_ERROR` and the next fallback is tried. One of `openai`,
      #   `anthropic`, `local` (Models::ModelProvider).
      #   @return [String]
      field :model_provider, "modelProvider", :string, required: true

      # @!attribute [r] model
      #   The model, as the provider names it. Unset or `null`: the provider's default.
      #   @return [String, nil]
      field :model, "model", [:nullable, :string]
    end

    # An API key; the secret is never part of it.
    class ApiKey < Agentry::Model
      # @!attribute [r] id
      #   The key's id: `key_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] name
      #   The key's label; empty when it has none.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] prefix
      #   The first characters of the key, to recognise it.
      #   @return [String]
      field :prefix, "prefix", :string, required: true

      # @!attribute [r] scopes
      #   What the key may do: every scope it holds in this version. One of `agents:read`, `agents:write`,
      #   `agents:delete`, `messages:send`, `keys:manage`, `history:read`, `history:delete`, `usage:read`,
      #   `webhooks:manage`, `plugins:manage`, `members:read`, `members:write`, `budgets:read`,
      #   `budgets:write`, `audit:read` (Models::Scope).
      #   @return [Array<String>]
      field :scopes, "scopes", [:array, :string], required: true

      # @!attribute [r] full_access
      #   Whether the key was created without scopes: it holds every scope, including scopes added in later
      #   versions, which `scopes` then lists as well.
      #   @return [Boolean]
      field :full_access, "fullAccess", :boolean, required: true

      # @!attribute [r] created_at
      #   When the key was created.
      #   @return [Time, nil]
      field :created_at, "createdAt", [:nullable, :time], required: true

      # @!attribute [r] last_used_at
      #   When the key was last used, to within a few seconds; `null`: never used.
      #   @return [Time, nil]
      field :last_used_at, "lastUsedAt", [:nullable, :time], required: true

      # @!attribute [r] expires_at
      #   When the key stops working; `null`: never.
      #   @return [Time, nil]
      field :expires_at, "expiresAt", [:nullable, :time], required: true

      # @!attribute [r] created_by
      #   The member who created the key (`usr_…`), directly or through a key they created; `null` for a key
      #   the admin CLI made.
      #   @return [String, nil]
      field :created_by, "createdBy", [:nullable, :string], required: true
    end

    # The ApiKeyCreated object.
    class ApiKeyCreated < Agentry::Model
      # @!attribute [r] id
      #   The key's id: `key_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] name
      #   The key's label; empty when it has none.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] prefix
      #   The first characters of the key, to recognise it.
      #   @return [String]
      field :prefix, "prefix", :string, required: true

      # @!attribute [r] scopes
      #   What the key may do: every scope it holds in this version. One of `agents:read`, `agents:write`,
      #   `agents:delete`, `messages:send`, `keys:manage`, `history:read`, `history:delete`, `usage:read`,
      #   `webhooks:manage`, `plugins:manage`, `members:read`, `members:write`, `budgets:read`,
      #   `budgets:write`, `audit:read` (Models::Scope).
      #   @return [Array<String>]
      field :scopes, "scopes", [:array, :string], required: true

      # @!attribute [r] full_access
      #   Whether the key was created without scopes: it holds every scope, including scopes added in later
      #   versions, which `scopes` then lists as well.
      #   @return [Boolean]
      field :full_access, "fullAccess", :boolean, required: true

      # @!attribute [r] created_at
      #   When the key was created.
      #   @return [Time, nil]
      field :created_at, "createdAt", [:nullable, :time], required: true

      # @!attribute [r] last_used_at
      #   When the key was last used, to within a few seconds; `null`: never used.
      #   @return [Time, nil]
      field :last_used_at, "lastUsedAt", [:nullable, :time], required: true

      # @!attribute [r] expires_at
      #   When the key stops working; `null`: never.
      #   @return [Time, nil]
      field :expires_at, "expiresAt", [:nullable, :time], required: true

      # @!attribute [r] created_by
      #   The member who created the key (`usr_…`), directly or through a key they created; `null` for a key
      #   the admin CLI made.
      #   @return [String, nil]
      field :created_by, "createdBy", [:nullable, :string], required: true

      # @!attribute [r] key
      #   The secret: `agentry_sk_` and 38 letters and digits. Shown this once; store it safely.
      #   @return [String]
      field :key, "key", :string, required: true, sensitive: true
    end

    # The ApiKeyRevoked object.
    class ApiKeyRevoked < Agentry::Model
      # @!attribute [r] id
      #   The revoked key's id: `key_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] revoked
      #   @return [true]
      field :revoked, "revoked", :boolean, required: true
    end

    # One change to the account: who made it, what it changed, when and from where.
    class AuditEvent < Agentry::Model
      # @!attribute [r] id
      #   The event's id; ids sort by time: `aud_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] at
      #   When the change was made.
      #   @return [Time]
      field :at, "at", :time, required: true

      # @!attribute [r] actor
      #   Who made the change.
      #   @return [AuditEventActor]
      field :actor, "actor", "AuditEventActor", required: true

      # @!attribute [r] action
      #   What was done, `<resource>.<verb>`: `agent.create`, `key.revoke`, `secret.set`, …
      #   @return [String]
      field :action, "action", :string, required: true

      # @!attribute [r] target
      #   What was changed.
      #   @return [AuditEventTarget]
      field :target, "target", "AuditEventTarget", required: true

      # @!attribute [r] ip
      #   The caller's address; `null` when unknown (the CLI).
      #   @return [String, nil]
      field :ip, "ip", [:nullable, :string], required: true

      # @!attribute [r] request_id
      #   The request's id (`X-Request-Id`); `null` for the CLI.
      #   @return [String, nil]
      field :request_id, "requestId", [:nullable, :string], required: true

      # @!attribute [r] changes
      #   The fields the change changed, `{field: {from, to}}` (a create: `from` is `null`); `null` when it
      #   lists none. A secret value, a key's secret or a signing secret never appears: such a field reads
      #   `"[redacted]"`.
      #   @return [Hash{Symbol => AuditEventChanges}, nil]
      field :changes, "changes", [:nullable, [:map, "AuditEventChanges"]], required: true
    end

    # Who made the change.
    class AuditEventActor < Agentry::Model
      # @!attribute [r] type
      #   `member`: a console session's member; `key`: an API key; `cli`: the admin CLI. One of `member`,
      #   `key`, `cli`.
      #   @return [String]
      field :type, "type", :string, required: true

      # @!attribute [r] id
      #   The member's or key's id; `null` for the CLI.
      #   @return [String, nil]
      field :id, "id", [:nullable, :string], required: true
    end

    # The AuditEventChanges object.
    class AuditEventChanges < Agentry::Model
      # @!attribute [r] from
      #   @return [Object]
      field :from, "from", :json, required: true

      # @!attribute [r] to
      #   @return [Object]
      field :to, "to", :json, required: true
    end

    # What was changed.
    class AuditEventTarget < Agentry::Model
      # @!attribute [r] type
      #   The kind of resource changed.
      #   @return [String]
      field :type, "type", :string, required: true

      # @!attribute [r] id
      #   The resource changed (an agent's secret: `<agentId>/<NAME>`).
      #   @return [String]
      field :id, "id", :string, required: true
    end

    # A message sent with `background: true` (or paused for tool approval): the reply object with `status`
    # added. One object with optional fields rather than a union of three: `pending` has only `id`,
    # `agentId`, `userId`, `roomId` and `status`; `completed` has every field of `Reply` as well; `failed`
    # has the ids and `error`; `cancelled` has either the reply's fields or `error`; `requires_action` has
    # the ids, `pendingToolCalls` and `approvalExpiresAt`. A completed one is answered so for as long as
    # its reply is stored; a failed one for 24 hours after it ended (or `STREAM_RETENTION`, if longer).
    class BackgroundMessage < Agentry::Model
      # @!attribute [r] id
      #   The reply's id: `msg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent that answers: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] user_id
      #   The request's `userId`, echoed; `null` when it carried none.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The request's `roomId`, echoed; `null` when it carried none.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true

      # @!attribute [r] status
      #   `pending`: the reply is being generated (only the ids are known); `requires_action`: paused before
      #   tool calls that wait for a person's approval (see `pendingToolCalls`; answer at `POST
      #   …/messages/{messageId}/approve`); `completed`: every field of the reply is here; `failed`: see
      #   `error`; `cancelled`: stopped, either by a later message that interrupted it (every field of the
      #   reply is here, with the text it had and `finishReason: "cancelled"`) or by the kill switch
      #   (`error` says so, no reply). One of `pending`, `requires_action`, `completed`, `failed`,
      #   `cancelled` (Models::BackgroundMessageStatus).
      #   @return [String]
      field :status, "status", :string, required: true

      # @!attribute [r] text
      #   The reply text.
      #   @return [String]
      field :text, "text", :string

      # @!attribute [r] model
      #   The model that answered, as the provider names it.
      #   @return [String]
      field :model, "model", :string

      # @!attribute [r] model_provider
      #   The provider that answered. One of `openai`, `anthropic`, `local` (Models::ModelProvider).
      #   @return [String]
      field :model_provider, "modelProvider", :string

      # @!attribute [r] finish_reason
      #   Why generation stopped: `stop` (natural end), `length` (cut short: `maxTokens` reached or, on the
      #   `local` provider, its reply time limit or a loop of repeated text), `content_filter` (the provider
      #   withheld content), `other`, or `cancelled` (a later message to the conversation interrupted it
      #   with `onConflict: "interrupt"`: the text is what was generated before). One of `stop`, `length`,
      #   `content_filter`, `other`, `cancelled` (Models::FinishReason).
      #   @return [String]
      field :finish_reason, "finishReason", :string

      # @!attribute [r] usage
      #   Tokens used, as the provider reported them; zeros when it did not.
      #   @return [Usage]
      field :usage, "usage", "Usage"

      # @!attribute [r] latency_ms
      #   Milliseconds from receipt to the complete reply.
      #   @return [Integer]
      field :latency_ms, "latencyMs", :integer

      # @!attribute [r] created_at
      #   When the reply was complete.
      #   @return [Time]
      field :created_at, "createdAt", :time

      # @!attribute [r] tool_calls
      #   The tools of the agent's plugins the model called during the turn, in order, with their outcomes;
      #   absent when it called none.
      #   @return [Array<ToolCall>]
      field :tool_calls, "toolCalls", [:array, "ToolCall"]

      # @!attribute [r] citations
      #   The chunks of the agent's documents the prompt carried, best first, under the markers `[1]`,
      #   `[2]`, ... the model was asked to cite; absent when it carried none.
      #   @return [Array<Citation>]
      field :citations, "citations", [:array, "Citation"]

      # @!attribute [r] error
      #   Why it failed; `failed`, and `cancelled` by the kill switch, only.
      #   @return [BackgroundMessageError]
      field :error, "error", "BackgroundMessageError"

      # @!attribute [r] pending_tool_calls
      #   `requires_action` only: the calls still waiting for an answer.
      #   @return [Array<PendingToolCall>]
      field :pending_tool_calls, "pendingToolCalls", [:array, "PendingToolCall"]

      # @!attribute [r] approval_expires_at
      #   `requires_action` only: when the wait ends; unanswered by then, the message fails with
      #   `APPROVAL_EXPIRED`.
      #   @return [Time]
      field :approval_expires_at, "approvalExpiresAt", :time
    end

    # A message accepted without its reply: a background message (its reply is generated whatever happens
    # to the caller), or a send paused for tool approval.
    class BackgroundMessageAccepted < Agentry::Model
      # @!attribute [r] id
      #   The id the reply will carry: read it at `GET /v1/agents/{agentId}/messages/{id}`: `msg_` and a
      #   ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] status
      #   `pending`: the reply is being generated (`background: true`). `requires_action`: a send without
      #   `background` whose turn paused before tools that wait for approval (see `pendingToolCalls`). One
      #   of `pending`, `requires_action`.
      #   @return [String]
      field :status, "status", :string, required: true

      # @!attribute [r] pending_tool_calls
      #   `requires_action` only: the calls to approve or refuse.
      #   @return [Array<PendingToolCall>]
      field :pending_tool_calls, "pendingToolCalls", [:array, "PendingToolCall"]
    end

    # Why it failed; `failed`, and `cancelled` by the kill switch, only.
    class BackgroundMessageError < Agentry::Model
      # @!attribute [r] code
      #   An error code, as in the error envelope. One of `INVALID_REQUEST`, `UNAUTHORIZED`,
      #   `BUDGET_EXCEEDED`, `FORBIDDEN`, `INSUFFICIENT_QUOTA`, `AGENT_NOT_FOUND`, `CONVERSATION_NOT_FOUND`,
      #   `MESSAGE_NOT_FOUND`, `STREAM_NOT_FOUND`, `WEBHOOK_NOT_FOUND`, `DELIVERY_NOT_FOUND`,
      #   `SECRET_NOT_FOUND`, `API_KEY_NOT_FOUND`, `MEMORY_NOT_FOUND`, `DOCUMENT_NOT_FOUND`,
      #   `SCHEDULE_NOT_FOUND`, `MEMBER_NOT_FOUND`, `BUDGET_NOT_FOUND`, `NOT_FOUND`, `METHOD_NOT_ALLOWED`,
      #   `AGENT_INACTIVE`, `IDEMPOTENCY_KEY_IN_USE`, `PRECONDITION_FAILED`, `CONVERSATION_BUSY`,
      #   `MESSAGE_NOT_AWAITING_APPROVAL`, `APPROVAL_EXPIRED`, `MEMBER_EXISTS`, `LAST_OWNER`,
      #   `PAYLOAD_TOO_LARGE`, `UNSUPPORTED_MEDIA_TYPE`, `IDEMPOTENCY_KEY_REUSED`, `RATE_LIMIT_EXCEEDED`,
      #   `INTERNAL_ERROR`, `MODEL_ERROR`, `AGENT_UNAVAILABLE` (Models::ErrorCode).
      #   @return [String]
      field :code, "code", :string, required: true

      # @!attribute [r] message
      #   What went wrong, for a person.
      #   @return [String]
      field :message, "message", :string, required: true
    end

    # A spend budget (docs/api/budgets.md).
    class Budget < Agentry::Model
      # @!attribute [r] id
      #   The budget's id: `bdg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   Set: only this agent's messages count.
      #   @return [String, nil]
      field :agent_id, "agentId", [:nullable, :string], required: true

      # @!attribute [r] api_key_id
      #   Set: only the messages sent with this key count.
      #   @return [String, nil]
      field :api_key_id, "apiKeyId", [:nullable, :string], required: true

      # @!attribute [r] unit
      #   `tokens` or `usd` (US dollars). One of `tokens`, `usd`.
      #   @return [String]
      field :unit, "unit", :string, required: true

      # @!attribute [r] period
      #   `day` or `month`, in UTC. One of `day`, `month`.
      #   @return [String]
      field :period, "period", :string, required: true

      # @!attribute [r] limit
      #   In the budget's unit.
      #   @return [Numeric]
      field :limit, "limit", :number, required: true

      # @!attribute [r] spend
      #   Where the budget stands in its current period.
      #   @return [BudgetSpend]
      field :spend, "spend", "BudgetSpend", required: true

      # @!attribute [r] created_at
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] updated_at
      #   @return [Time]
      field :updated_at, "updatedAt", :time, required: true
    end

    # The BudgetDeletedResponseData object.
    class BudgetDeletedResponseData < Agentry::Model
      # @!attribute [r] id
      #   The deleted budget's id: `bdg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end

    # Where the budget stands in its current period.
    class BudgetSpend < Agentry::Model
      # @!attribute [r] spent
      #   Spent this period, in the budget's unit, with the estimates of messages under way.
      #   @return [Numeric]
      field :spent, "spent", :number, required: true

      # @!attribute [r] remaining
      #   What is left of the limit this period.
      #   @return [Numeric]
      field :remaining, "remaining", :number, required: true

      # @!attribute [r] percent
      #   `spent` as a percentage of `limit`, to two decimals.
      #   @return [Numeric]
      field :percent, "percent", :number, required: true

      # @!attribute [r] period_start
      #   @return [Time]
      field :period_start, "periodStart", :time, required: true

      # @!attribute [r] resets_at
      #   When the next period starts at zero.
      #   @return [Time]
      field :resets_at, "resetsAt", :time, required: true
    end

    # The CancelAgentRunsResponseData object.
    class CancelAgentRunsResponseData < Agentry::Model
      # @!attribute [r] cancelled
      #   How many runs were pending and are now cancelled.
      #   @return [Integer]
      field :cancelled, "cancelled", :integer, required: true
    end

    # The agent's own `settings.model` and `settings.agentry`, which the file uses for something else.
    class CharacterAgentSettings < Agentry::Model
      # @!attribute [r] model
      #   Any JSON value. No string in it, and no object key, at any depth, may contain the NUL character
      #   (U+0000); numbers are kept as double-precision floats, so one beyond their range (about ±1.8e308)
      #   is refused.
      #   @return [Object]
      field :model, "model", :json

      # @!attribute [r] agentry
      #   Any JSON value. No string in it, and no object key, at any depth, may contain the NUL character
      #   (U+0000); numbers are kept as double-precision floats, so one beyond their range (about ±1.8e308)
      #   is refused.
      #   @return [Object]
      field :agentry, "agentry", :json
    end

    # What an Agentry export keeps of the agent beyond the elizaOS fields.
    class CharacterAgentrySettings < Agentry::Model
      # @!attribute [r] model_provider
      #   The agent's `modelProvider`; preferred to a top-level `modelProvider`. One of `openai`,
      #   `anthropic`, `local` (Models::ModelProvider).
      #   @return [String]
      field :model_provider, "modelProvider", :string

      # @!attribute [r] default_model
      #   The agent uses the server's default provider and model; `settings.model` is then the one its file
      #   named, kept in `personality.sourceModel`.
      #   @return [true]
      field :default_model, "defaultModel", :boolean

      # @!attribute [r] goals
      #   The agent's `goals`.
      #   @return [Array<String>]
      field :goals, "goals", [:array, :string]

      # @!attribute [r] clients
      #   The agent's `clients`; preferred to a top-level `clients`.
      #   @return [Array<String, ClientIntegration>]
      field :clients, "clients", [:array, [:union, :string, "ClientIntegration"]]

      # @!attribute [r] plugins
      #   The agent's plugins with their `enabled` and `config`; each is restored for the name `plugins`
      #   lists.
      #   @return [Array<String, PluginConfig>]
      field :plugins, "plugins", [:array, [:union, :string, "PluginConfig"]]

      # @!attribute [r] personality
      #   Keys of the agent's `personality` that the file has no field for (`lore`, `sourceModelProvider`,
      #   `extraFields`, the agent's own traits); restored as they are.
      #   @return [Hash{Symbol => Object}]
      field :personality, "personality", :json

      # @!attribute [r] settings
      #   The agent's own `settings.model` and `settings.agentry`, which the file uses for something else.
      #   @return [CharacterAgentSettings]
      field :settings, "settings", "CharacterAgentSettings"
    end

    # An imported character file: the agent created, and the warnings.
    class CharacterImport < Agentry::Model
      # @!attribute [r] agent
      #   An agent, as Get, List, Create and Update return it.
      #   @return [Agent]
      field :agent, "agent", "Agent", required: true

      # @!attribute [r] warnings
      #   What was kept but will not act, or was set aside, by JSON path in the file.
      #   @return [Array<FieldIssue>]
      field :warnings, "warnings", [:array, "FieldIssue"], required: true
    end

    # A character file checked with `dryRun=true`: the agent it would create, and the warnings; nothing
    # was stored.
    class CharacterImportPreview < Agentry::Model
      # @!attribute [r] agent
      #   The agent an import would create: its fields, with no id, status or times yet.
      #   @return [AgentDraft]
      field :agent, "agent", "AgentDraft", required: true

      # @!attribute [r] warnings
      #   What was kept but will not act, or was set aside, by JSON path in the file.
      #   @return [Array<FieldIssue>]
      field :warnings, "warnings", [:array, "FieldIssue"], required: true
    end

    # A file or folder reference.
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class CharacterKnowledgeSource < Agentry::Model
      # @!attribute [r] path
      #   A file.
      #   @return [String]
      field :path, "path", :string

      # @!attribute [r] directory
      #   A folder.
      #   @return [String, Hash{Symbol => Object}]
      field :directory, "directory", [:union, :string, :json]

      # @!attribute [r] shared
      #   @return [Boolean]
      field :shared, "shared", :boolean
    end

    # The message: its `text`, and whatever else elizaOS records with it (kept).
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class CharacterMessageContent < Agentry::Model
      # @!attribute [r] text
      #   What is said.
      #   @return [String]
      field :text, "text", :string

      # @!attribute [r] action
      #   v0.x: the action the reply triggers, by name.
      #   @return [String]
      field :action, "action", :string

      # @!attribute [r] actions
      #   1.x: the actions the reply triggers, by name.
      #   @return [Array<String>]
      field :actions, "actions", [:array, :string]
    end

    # One message of an example conversation.
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class CharacterMessageExample < Agentry::Model
      # @!attribute [r] name
      #   1.x: who speaks, the character's name or a placeholder for the other party (`{{name1}}`,
      #   `{{user1}}`).
      #   @return [String]
      field :name, "name", :string

      # @!attribute [r] user
      #   v0.x: who speaks, as `name` in 1.x.
      #   @return [String]
      field :user, "user", :string

      # @!attribute [r] content
      #   The message: its `text`, and whatever else elizaOS records with it (kept).
      #   @return [CharacterMessageContent]
      field :content, "content", "CharacterMessageContent", required: true
    end

    # The agent's settings, without its secrets.
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class CharacterSettings < Agentry::Model
      # @!attribute [r] model
      #   The agent's `model`.
      #   @return [String]
      field :model, "model", :string

      # @!attribute [r] secrets
      #   Always empty: secrets never leave.
      #   @return [Hash{Symbol => Object}]
      field :secrets, "secrets", :json, required: true

      # @!attribute [r] agentry
      #   What an Agentry export keeps of the agent beyond the elizaOS fields.
      #   @return [CharacterAgentrySettings]
      field :agentry, "agentry", "CharacterAgentrySettings"
    end

    # How the character writes. Kept in `personality.style`.
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class CharacterStyle < Agentry::Model
      # @!attribute [r] all
      #   Guidelines for every reply; they become the agent's response guidelines.
      #   @return [Array<String>]
      field :all, "all", [:array, :string]

      # @!attribute [r] chat
      #   Guidelines for chat replies; they become the agent's response guidelines.
      #   @return [Array<String>]
      field :chat, "chat", [:array, :string]

      # @!attribute [r] post
      #   Guidelines for social media posts; kept for the export.
      #   @return [Array<String>]
      field :post, "post", [:array, :string]
    end

    # A chunk of one of the agent's documents that the reply's prompt carried.
    class Citation < Agentry::Model
      # @!attribute [r] document_id
      #   The document: `doc_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :document_id, "documentId", :string, required: true

      # @!attribute [r] chunk
      #   The chunk's position in the document, from 0.
      #   @return [Integer]
      field :chunk, "chunk", :integer, required: true

      # @!attribute [r] score
      #   How well it matched the message, relative to the best passage of the reply: 1 for the best, less
      #   for the others.
      #   @return [Numeric]
      field :score, "score", :number, required: true
    end

    # Platform integrations: a platform name, or an object with a `type` and that platform's
    # configuration.
    #
    # Keys besides the fields below are kept under their JSON names as Symbols: read them with
    # `model[:key]`; `to_h` and `to_wire` include them.
    class ClientIntegration < Agentry::Model
      # @!attribute [r] type
      #   @return [String]
      field :type, "type", :string, required: true
    end

    # One platform client of an agent and how it stands.
    class ClientStatus < Agentry::Model
      # @!attribute [r] type
      #   The platform, as named in `clients`.
      #   @return [String]
      field :type, "type", :string, required: true

      # @!attribute [r] state
      #   How the platform's connector stands. One of `connected`, `connecting`, `stopped`, `failed`,
      #   `inert`.
      #   @return [String]
      field :state, "state", :string, required: true

      # @!attribute [r] connected_at
      #   @return [Time, nil]
      field :connected_at, "connectedAt", [:nullable, :time], required: true

      # @!attribute [r] last_event_at
      #   @return [Time, nil]
      field :last_event_at, "lastEventAt", [:nullable, :time], required: true

      # @!attribute [r] last_error
      #   The last error the connector met, if any.
      #   @return [ClientStatusLastError, nil]
      field :last_error, "lastError", [:nullable, "ClientStatusLastError"], required: true
    end

    # The last error the connector met, if any.
    class ClientStatusLastError < Agentry::Model
      # @!attribute [r] code
      #   @return [String]
      field :code, "code", :string, required: true

      # @!attribute [r] message
      #   @return [String]
      field :message, "message", :string, required: true

      # @!attribute [r] at
      #   When it happened.
      #   @return [Time]
      field :at, "at", :time, required: true
    end

    # The history of one (agent, `userId`, `roomId`): messages sent without `userId` or `roomId` share the
    # default one, whose `userId` and `roomId` are `null`.
    class Conversation < Agentry::Model
      # @!attribute [r] id
      #   The conversation's id, stable for its life: `conv_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] user_id
      #   The conversation's `userId`; `null` for messages sent without one.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The conversation's `roomId`; `null` for messages sent without one.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true

      # @!attribute [r] message_count
      #   Messages it holds, both roles.
      #   @return [Integer]
      field :message_count, "messageCount", :integer, required: true

      # @!attribute [r] created_at
      #   When its first message was stored.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] last_message_at
      #   When its latest message was stored.
      #   @return [Time]
      field :last_message_at, "lastMessageAt", :time, required: true
    end

    # The ConversationDeleted object.
    class ConversationDeleted < Agentry::Model
      # @!attribute [r] id
      #   The deleted conversation's id: `conv_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true

      # @!attribute [r] messages_deleted
      #   Messages deleted with it.
      #   @return [Integer]
      field :messages_deleted, "messagesDeleted", :integer, required: true
    end

    # Where a page of a cursor-paged list is.
    class CursorPagination < Agentry::Model
      # @!attribute [r] limit
      #   Page size asked for.
      #   @return [Integer]
      field :limit, "limit", :integer, required: true

      # @!attribute [r] has_more
      #   Whether more items lie beyond this page in the direction of paging: the next page is `before` (for
      #   `desc`) or `after` (for `asc`) this page's last item's id.
      #   @return [Boolean]
      field :has_more, "hasMore", :boolean, required: true
    end

    # One attempt to deliver one event to the endpoint. What the endpoint answered is never shown beyond
    # its status.
    class Delivery < Agentry::Model
      # @!attribute [r] id
      #   The attempt's id: `dlv_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] event_id
      #   The event's id: the `webhook-id` header of every attempt to deliver it: `evt_` and a ULID. Treat
      #   it as opaque.
      #   @return [String]
      field :event_id, "eventId", :string, required: true

      # @!attribute [r] event_type
      #   The event's type. One of `agent.created`, `agent.updated`, `agent.status_changed`,
      #   `agent.deleted`, `message.completed`, `message.failed`, `message.requires_action`,
      #   `budget.threshold`, `webhook.test`.
      #   @return [String]
      field :event_type, "eventType", :string, required: true

      # @!attribute [r] attempt
      #   1 for the event's first attempt at this endpoint, then 2, 3, … across retries and redeliveries.
      #   @return [Integer]
      field :attempt, "attempt", :integer, required: true

      # @!attribute [r] status
      #   `pending` (waiting for its time, or being attempted), `succeeded` (the endpoint answered 2xx) or
      #   `failed` (see `error`). One of `pending`, `succeeded`, `failed`.
      #   @return [String]
      field :status, "status", :string, required: true

      # @!attribute [r] response_status
      #   The HTTP status the endpoint answered; `null` when it gave none.
      #   @return [Integer, nil]
      field :response_status, "responseStatus", [:nullable, :integer], required: true

      # @!attribute [r] duration_ms
      #   How long the attempt took, in milliseconds; `null` while pending.
      #   @return [Integer, nil]
      field :duration_ms, "durationMs", [:nullable, :integer], required: true

      # @!attribute [r] error
      #   Why the attempt failed (a status, a timeout, a refused address); `null` unless failed.
      #   @return [String, nil]
      field :error, "error", [:nullable, :string], required: true

      # @!attribute [r] created_at
      #   When the attempt was scheduled.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] next_attempt_at
      #   Pending: when it is due. Failed: when its retry is due; `null` when none follows.
      #   @return [Time, nil]
      field :next_attempt_at, "nextAttemptAt", [:nullable, :time], required: true
    end

    # A file an agent answers from (docs/api/documents.md).
    class Document < Agentry::Model
      # @!attribute [r] id
      #   The document's id: `doc_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent that answers from it.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] title
      #   Its title, 1 to 200 characters: the one given, else the file's name, else the first line of its
      #   text.
      #   @return [String]
      field :title, "title", :string, required: true

      # @!attribute [r] content_type
      #   The type it was read as. One of `text/plain`, `text/markdown`, `text/html`, `application/pdf`.
      #   @return [String]
      field :content_type, "contentType", :string, required: true

      # @!attribute [r] size_bytes
      #   The size of the file uploaded, in bytes.
      #   @return [Integer]
      field :size_bytes, "sizeBytes", :integer, required: true

      # @!attribute [r] text_length
      #   Characters of text read from it.
      #   @return [Integer]
      field :text_length, "textLength", :integer, required: true

      # @!attribute [r] chunks
      #   How many chunks its text was cut into.
      #   @return [Integer]
      field :chunks, "chunks", :integer, required: true

      # @!attribute [r] source
      #   The knowledge reference of the agent's character it answers; `null` when none was given.
      #   @return [String, nil]
      field :source, "source", [:nullable, :string], required: true

      # @!attribute [r] created_at
      #   When it was stored.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true
    end

    # The DocumentDeletedResponseData object.
    class DocumentDeletedResponseData < Agentry::Model
      # @!attribute [r] id
      #   The deleted document's id.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end

    # An agent as an elizaOS 1.x character file. Importing it gives an agent equal to this one in every
    # field but its id, times and `apiEndpoint`.
    class ExportedCharacterFile < Agentry::Model
      # @!attribute [r] name
      #   The agent's name.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] username
      #   @return [String]
      field :username, "username", :string

      # @!attribute [r] system
      #   @return [String]
      field :system, "system", :string

      # @!attribute [r] bio
      #   The agent's `bio`.
      #   @return [Array<String>]
      field :bio, "bio", [:array, :string], required: true

      # @!attribute [r] topics
      #   @return [Array<String>]
      field :topics, "topics", [:array, :string]

      # @!attribute [r] adjectives
      #   @return [Array<String>]
      field :adjectives, "adjectives", [:array, :string]

      # @!attribute [r] style
      #   How the character writes. Kept in `personality.style`.
      #   @return [CharacterStyle]
      field :style, "style", "CharacterStyle"

      # @!attribute [r] message_examples
      #   Example conversations, as arrays of `{name, content}`.
      #   @return [Array<Array<CharacterMessageExample>>]
      field :message_examples, "messageExamples", [:array, [:array, "CharacterMessageExample"]]

      # @!attribute [r] post_examples
      #   @return [Array<String>]
      field :post_examples, "postExamples", [:array, :string]

      # @!attribute [r] knowledge
      #   The agent's knowledge, with its file and folder references back in place.
      #   @return [Array<String, CharacterKnowledgeSource>]
      field :knowledge, "knowledge", [:array, [:union, :string, "CharacterKnowledgeSource"]]

      # @!attribute [r] templates
      #   @return [Hash{Symbol => String}]
      field :templates, "templates", [:map, :string]

      # @!attribute [r] plugins
      #   The name of every plugin of the agent.
      #   @return [Array<String>]
      field :plugins, "plugins", [:array, :string], required: true

      # @!attribute [r] settings
      #   The agent's settings, without its secrets.
      #   @return [CharacterSettings]
      field :settings, "settings", "CharacterSettings", required: true

      # @!attribute [r] secrets
      #   Always empty: secrets never leave.
      #   @return [Hash{Symbol => Object}]
      field :secrets, "secrets", :json, required: true
    end

    # One problem with one field of the request.
    class FieldIssue < Agentry::Model
      # @!attribute [r] field
      #   The field, in dotted and indexed notation; `body` for the body as a whole.
      #   @return [String]
      field :field, "field", :string, required: true

      # @!attribute [r] issue
      #   @return [String]
      field :issue, "issue", :string, required: true
    end

    # A stored message: the one sent to the agent (`user`) or its reply (`assistant`, with the call's
    # model, provider, finish reason, usage and latency). A message and its reply are stored together,
    # once the reply is complete.
    class HistoryMessage < Agentry::Model
      # @!attribute [r] id
      #   The message's id; an assistant message has the id its send call answered with: `msg_` and a ULID.
      #   Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent of the conversation: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] conversation_id
      #   The conversation it belongs to: `conv_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :conversation_id, "conversationId", :string, required: true

      # @!attribute [r] user_id
      #   The conversation's `userId`; `null` for messages sent without one.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The conversation's `roomId`; `null` for messages sent without one.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true

      # @!attribute [r] role
      #   `user`: the message sent to the agent; `assistant`: the agent's reply. One of `user`, `assistant`.
      #   @return [String]
      field :role, "role", :string, required: true

      # @!attribute [r] text
      #   The text.
      #   @return [String]
      field :text, "text", :string, required: true

      # @!attribute [r] model
      #   The model that answered, as the provider names it. Assistant messages only.
      #   @return [String]
      field :model, "model", :string

      # @!attribute [r] model_provider
      #   The provider that answered. Assistant messages only. One of `openai`, `anthropic`, `local`
      #   (Models::ModelProvider).
      #   @return [String]
      field :model_provider, "modelProvider", :string

      # @!attribute [r] finish_reason
      #   Why generation stopped, as in the send reply; `null` for replies stored before it was recorded.
      #   Assistant messages only. One of `stop`, `length`, `content_filter`, `other`, `cancelled`
      #   (Models::FinishReason).
      #   @return [String, nil]
      field :finish_reason, "finishReason", [:nullable, :string]

      # @!attribute [r] usage
      #   Tokens used by the call. Assistant messages only.
      #   @return [HistoryMessageUsage]
      field :usage, "usage", "HistoryMessageUsage"

      # @!attribute [r] latency_ms
      #   Milliseconds from receipt to the complete reply. Assistant messages only.
      #   @return [Integer]
      field :latency_ms, "latencyMs", :integer

      # @!attribute [r] created_at
      #   When the message was received, or the reply was complete.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] tool_calls
      #   The tools the model called while writing the reply, with their outcomes, as in the send reply;
      #   absent when it called none. Assistant messages only.
      #   @return [Array<ToolCall>]
      field :tool_calls, "toolCalls", [:array, "ToolCall"]

      # @!attribute [r] citations
      #   The chunks of the agent's documents the reply's prompt carried, as in the send reply; absent when
      #   it carried none. Assistant messages only.
      #   @return [Array<Citation>]
      field :citations, "citations", [:array, "Citation"]
    end

    # Tokens used by the call. Assistant messages only.
    class HistoryMessageUsage < Agentry::Model
      # @!attribute [r] input_tokens
      #   @return [Integer]
      field :input_tokens, "inputTokens", :integer, required: true

      # @!attribute [r] output_tokens
      #   @return [Integer]
      field :output_tokens, "outputTokens", :integer, required: true

      # @!attribute [r] total_tokens
      #   `inputTokens + outputTokens`.
      #   @return [Integer]
      field :total_tokens, "totalTokens", :integer, required: true
    end

    # The KnowledgeSourcesResponseData object.
    class KnowledgeSourcesResponseData < Agentry::Model
      # @!attribute [r] references
      #   The character's file and folder references, in the file's order.
      #   @return [Array<KnowledgeSourcesResponseDataReferencesItem>]
      field :references, "references", [:array, "KnowledgeSourcesResponseDataReferencesItem"], required: true

      # @!attribute [r] missing
      #   The paths of the references no document answers yet.
      #   @return [Array<String>]
      field :missing, "missing", [:array, :string], required: true
    end

    # The character's file and folder references, in the file's order.
    class KnowledgeSourcesResponseDataReferencesItem < Agentry::Model
      # @!attribute [r] path
      #   The path the character file names.
      #   @return [String]
      field :path, "path", :string, required: true

      # @!attribute [r] kind
      #   Whether it names a file or a folder. One of `file`, `folder`.
      #   @return [String]
      field :kind, "kind", :string, required: true

      # @!attribute [r] uploaded
      #   Whether a document answers it: one uploaded with this path as `source` (a folder's: a path inside
      #   it).
      #   @return [Boolean]
      field :uploaded, "uploaded", :boolean, required: true
    end

    # A person of the account, who signs in to the console with the scopes of their role.
    class Member < Agentry::Model
      # @!attribute [r] id
      #   The member's id: `usr_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] email
      #   The member's email, in lowercase; their OIDC sign-in maps to it. `null` only for the owner the
      #   admin CLI made with the account, until one is set.
      #   @return [String, nil]
      field :email, "email", [:nullable, :string], required: true

      # @!attribute [r] name
      #   The member's name.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] role
      #   What the member may do (docs/api/members.md, "Roles"). One of `owner`, `admin`, `developer`,
      #   `viewer` (Models::Role).
      #   @return [String]
      field :role, "role", :string, required: true

      # @!attribute [r] created_at
      #   When the member was added.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true
    end

    # The MemberRemovedResponseData object.
    class MemberRemovedResponseData < Agentry::Model
      # @!attribute [r] id
      #   The removed member's id: `usr_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] removed
      #   @return [true]
      field :removed, "removed", :boolean, required: true
    end

    # A fact an agent keeps about one of its users (docs/api/memories.md).
    class Memory < Agentry::Model
      # @!attribute [r] id
      #   The memory's id: `mem_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent that keeps it.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] user_id
      #   The user it is about.
      #   @return [String]
      field :user_id, "userId", :string, required: true

      # @!attribute [r] text
      #   The fact, 1 to 1000 characters.
      #   @return [String]
      field :text, "text", :string, required: true

      # @!attribute [r] source
      #   Where it was learnt; `null` when it was added by hand.
      #   @return [MemorySource, nil]
      field :source, "source", [:nullable, "MemorySource"], required: true

      # @!attribute [r] created_at
      #   When it was stored.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true
    end

    # The MemoryDeletedResponseData object.
    class MemoryDeletedResponseData < Agentry::Model
      # @!attribute [r] id
      #   The deleted memory's id.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end

    # Where it was learnt; `null` when it was added by hand.
    class MemorySource < Agentry::Model
      # @!attribute [r] message_id
      #   The user's message it was learnt from (`msg_…`).
      #   @return [String]
      field :message_id, "messageId", :string, required: true
    end

    # Data of `message.delta`: the next piece of the reply's text.
    class MessageDelta < Agentry::Model
      # @!attribute [r] text
      #   Text to append to the reply; never empty.
      #   @return [String]
      field :text, "text", :string, required: true
    end

    # Data of `message.started`: the provider accepted the message; the reply follows.
    class MessageStarted < Agentry::Model
      # @!attribute [r] id
      #   The id the completed reply will carry: `msg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent that answers: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] user_id
      #   The request's `userId`, echoed; `null` when it carried none.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The request's `roomId`, echoed; `null` when it carried none.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true
    end

    # Where a page of a list is.
    class Pagination < Agentry::Model
      # @!attribute [r] page
      #   This page's number.
      #   @return [Integer]
      field :page, "page", :integer, required: true

      # @!attribute [r] limit
      #   Page size asked for.
      #   @return [Integer]
      field :limit, "limit", :integer, required: true

      # @!attribute [r] total
      #   Agents matching the filter, on all pages.
      #   @return [Integer]
      field :total, "total", :integer, required: true

      # @!attribute [r] total_pages
      #   @return [Integer]
      field :total_pages, "totalPages", :integer, required: true

      # @!attribute [r] has_more
      #   Whether a page after this one exists.
      #   @return [Boolean]
      field :has_more, "hasMore", :boolean, required: true
    end

    # A tool call the model made that waits for a person's approval before it runs. Kept by the server: an
    # answer names calls by id only, so what runs is what the model asked for.
    class PendingToolCall < Agentry::Model
      # @!attribute [r] id
      #   The call's id: what `POST …/messages/{messageId}/approve` names.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] tool
      #   The tool as the model called it: `"<plugin>__<tool>"`.
      #   @return [String]
      field :tool, "tool", :string, required: true

      # @!attribute [r] arguments
      #   The arguments as JSON text, as the model wrote them.
      #   @return [String]
      field :arguments, "arguments", :string, required: true
    end

    # From receipt to the complete reply, of completed sends.
    class Percentiles < Agentry::Model
      # @!attribute [r] p50
      #   The median, in ms; `null` without a completed send.
      #   @return [Numeric, nil]
      field :p50, "p50", [:nullable, :number], required: true

      # @!attribute [r] p95
      #   The 95th percentile, in ms; `null` without a completed send.
      #   @return [Numeric, nil]
      field :p95, "p95", [:nullable, :number], required: true
    end

    # A plugin this deployment installs.
    class Plugin < Agentry::Model
      # @!attribute [r] name
      #   The plugin's name, as an agent's `plugins` names it.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] version
      #   The plugin's version.
      #   @return [String]
      field :version, "version", :string, required: true

      # @!attribute [r] description
      #   What the plugin does.
      #   @return [String]
      field :description, "description", :string, required: true

      # @!attribute [r] config_schema
      #   The JSON Schema (draft 2020-12) of the plugin's `config`; `{}` parses when the plugin has a
      #   default config.
      #   @return [Hash{Symbol => Object}]
      field :config_schema, "configSchema", :json, required: true

      # @!attribute [r] secrets
      #   Names of the agent secrets the plugin reads (`PUT /v1/agents/{agentId}/secrets/{name}`). A plugin
      #   whose config names a secret (the `mcp` plugin's `authSecret`) reads that one too.
      #   @return [Array<String>]
      field :secrets, "secrets", [:array, :string], required: true

      # @!attribute [r] tools
      #   The tools the plugin gives an agent. A plugin whose tools depend on its config (`mcp`: those of
      #   the MCP server it connects to) lists none here.
      #   @return [Array<PluginToolsItem>]
      field :tools, "tools", [:array, "PluginToolsItem"], required: true
    end

    # Plugin configurations: a plugin name (enabled, with its default config), or an object `{name,
    # enabled?, config?}`. An enabled plugin must be one `GET /v1/plugins` lists and its `config` must
    # satisfy that plugin's `configSchema`; otherwise `400 INVALID_REQUEST` naming `plugins[i]` or the
    # config's field. A disabled plugin is kept as given, known or not, and does nothing.
    class PluginConfig < Agentry::Model
      # @!attribute [r] name
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] enabled
      #   @return [Boolean]
      field :enabled, "enabled", :boolean

      # @!attribute [r] config
      #   @return [Hash{Symbol => Object}]
      field :config, "config", :json

      # @!attribute [r] require_approval
      #   Calls of these tools wait for a person's approval before they run: `true` for all the plugin's
      #   tools, or the names of some (as `GET /v1/plugins` lists them; a name the plugin does not have is
      #   refused with `400`). The message then stands in `requires_action` until `POST
      #   /v1/agents/{agentId}/messages/{messageId}/approve` decides.
      #   @return [Boolean, Array<String>]
      field :require_approval, "requireApproval", [:union, :boolean, [:array, :string]]
    end

    # The tools the plugin gives an agent. A plugin whose tools depend on its config (`mcp`: those of the
    # MCP server it connects to) lists none here.
    class PluginToolsItem < Agentry::Model
      # @!attribute [r] name
      #   The tool's name, as the model calls it.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] description
      #   What the tool does, as the model reads it.
      #   @return [String]
      field :description, "description", :string, required: true

      # @!attribute [r] input_schema
      #   The JSON Schema of the tool's arguments.
      #   @return [Hash{Symbol => Object}]
      field :input_schema, "inputSchema", :json, required: true
    end

    # The agent's complete reply to one message.
    class Reply < Agentry::Model
      # @!attribute [r] id
      #   The reply's id: `msg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent that answered: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] user_id
      #   The request's `userId`, echoed; `null` when it carried none.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The request's `roomId`, echoed; `null` when it carried none.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true

      # @!attribute [r] text
      #   The reply text.
      #   @return [String]
      field :text, "text", :string, required: true

      # @!attribute [r] model
      #   The model that answered, as the provider names it.
      #   @return [String]
      field :model, "model", :string, required: true

      # @!attribute [r] model_provider
      #   The provider that answered. One of `openai`, `anthropic`, `local` (Models::ModelProvider).
      #   @return [String]
      field :model_provider, "modelProvider", :string, required: true

      # @!attribute [r] finish_reason
      #   Why generation stopped: `stop` (natural end), `length` (cut short: `maxTokens` reached or, on the
      #   `local` provider, its reply time limit or a loop of repeated text), `content_filter` (the provider
      #   withheld content), `other`, or `cancelled` (a later message to the conversation interrupted it
      #   with `onConflict: "interrupt"`: the text is what was generated before). One of `stop`, `length`,
      #   `content_filter`, `other`, `cancelled` (Models::FinishReason).
      #   @return [String]
      field :finish_reason, "finishReason", :string, required: true

      # @!attribute [r] usage
      #   Tokens used, as the provider reported them; zeros when it did not.
      #   @return [Usage]
      field :usage, "usage", "Usage", required: true

      # @!attribute [r] latency_ms
      #   Milliseconds from receipt to the complete reply.
      #   @return [Integer]
      field :latency_ms, "latencyMs", :integer, required: true

      # @!attribute [r] created_at
      #   When the reply was complete.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] tool_calls
      #   The tools of the agent's plugins the model called during the turn, in order, with their outcomes;
      #   absent when it called none.
      #   @return [Array<ToolCall>]
      field :tool_calls, "toolCalls", [:array, "ToolCall"]

      # @!attribute [r] citations
      #   The chunks of the agent's documents the prompt carried, best first, under the markers `[1]`,
      #   `[2]`, ... the model was asked to cite; absent when it carried none.
      #   @return [Array<Citation>]
      field :citations, "citations", [:array, "Citation"]
    end

    # A schedule: at each time of its cron expression (in its time zone) the agent is sent `text` as one
    # background message, once across all processes (docs/api/schedules.md).
    class Schedule < Agentry::Model
      # @!attribute [r] id
      #   The schedule's id: `sch_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] agent_id
      #   The agent it messages: `agt_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :agent_id, "agentId", :string, required: true

      # @!attribute [r] cron
      #   The cron expression.
      #   @return [String]
      field :cron, "cron", :string, required: true

      # @!attribute [r] timezone
      #   The IANA time zone.
      #   @return [String]
      field :timezone, "timezone", :string, required: true

      # @!attribute [r] text
      #   The message each fire sends.
      #   @return [String]
      field :text, "text", :string, required: true

      # @!attribute [r] user_id
      #   The user id of each fire's message; null for none.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string], required: true

      # @!attribute [r] room_id
      #   The room id of each fire's message; null for none.
      #   @return [String, nil]
      field :room_id, "roomId", [:nullable, :string], required: true

      # @!attribute [r] enabled
      #   Whether it fires.
      #   @return [Boolean]
      field :enabled, "enabled", :boolean, required: true

      # @!attribute [r] next_fire_at
      #   Its next fire time; null while disabled.
      #   @return [Time, nil]
      field :next_fire_at, "nextFireAt", [:nullable, :time], required: true

      # @!attribute [r] next_fire_times
      #   Its next 5 fire times (UTC, ISO 8601), soonest first; empty while disabled.
      #   @return [Array<Time>]
      field :next_fire_times, "nextFireTimes", [:array, :time], required: true

      # @!attribute [r] skipped_fires
      #   Fires not run because every process of the service was down past them by more than an hour (one
      #   missed by less runs once at start).
      #   @return [Integer]
      field :skipped_fires, "skippedFires", :integer, required: true

      # @!attribute [r] last_fire
      #   Its last fire; null before the first.
      #   @return [ScheduleFire, nil]
      field :last_fire, "lastFire", [:nullable, "ScheduleFire"], required: true

      # @!attribute [r] created_at
      #   When it was created.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] updated_at
      #   When it was last changed.
      #   @return [Time]
      field :updated_at, "updatedAt", :time, required: true
    end

    # The ScheduleDeletedResponseData object.
    class ScheduleDeletedResponseData < Agentry::Model
      # @!attribute [r] id
      #   The deleted schedule's id: `sch_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end

    # A schedule's last fire and how its message went.
    class ScheduleFire < Agentry::Model
      # @!attribute [r] scheduled_at
      #   The fire time it stands for.
      #   @return [Time]
      field :scheduled_at, "scheduledAt", :time, required: true

      # @!attribute [r] fired_at
      #   When a process of the service ran it.
      #   @return [Time]
      field :fired_at, "firedAt", :time, required: true

      # @!attribute [r] message_id
      #   @return [String, nil]
      field :message_id, "messageId", [:nullable, :string], required: true

      # @!attribute [r] status
      #   The message's status (`pending`, `completed`, `failed`), or `skipped` when no message was sent
      #   (the agent was inactive). One of `pending`, `completed`, `failed`, `skipped`.
      #   @return [String]
      field :status, "status", :string, required: true

      # @!attribute [r] error
      #   Why the message failed, or why none was sent; null otherwise.
      #   @return [ScheduleFireError, nil]
      field :error, "error", [:nullable, "ScheduleFireError"], required: true
    end

    # Why the message failed, or why none was sent; null otherwise.
    class ScheduleFireError < Agentry::Model
      # @!attribute [r] code
      #   @return [String]
      field :code, "code", :string, required: true

      # @!attribute [r] message
      #   @return [String]
      field :message, "message", :string, required: true
    end

    # An agent's secret: its name and when it was set. Its value is never shown.
    class Secret < Agentry::Model
      # @!attribute [r] name
      #   The secret's name.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] updated_at
      #   When its value was last set.
      #   @return [Time]
      field :updated_at, "updatedAt", :time, required: true
    end

    # The SecretDeletedResponseData object.
    class SecretDeletedResponseData < Agentry::Model
      # @!attribute [r] name
      #   The deleted secret's name.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end

    # Why the agent is in `error`: the provider call that failed for a reason that will not fix itself.
    # `null` otherwise.
    class StatusReason < Agentry::Model
      # @!attribute [r] code
      #   The error code of the failure.
      #   @return [String]
      field :code, "code", :string, required: true

      # @!attribute [r] message
      #   @return [String]
      field :message, "message", :string, required: true

      # @!attribute [r] at
      #   When the failure happened.
      #   @return [Time]
      field :at, "at", :time, required: true
    end

    # Data of `error`: the stream failed after it started; no reply was stored.
    class StreamError < Agentry::Model
      # @!attribute [r] code
      #   An error code, as in the error envelope. One of `INVALID_REQUEST`, `UNAUTHORIZED`,
      #   `BUDGET_EXCEEDED`, `FORBIDDEN`, `INSUFFICIENT_QUOTA`, `AGENT_NOT_FOUND`, `CONVERSATION_NOT_FOUND`,
      #   `MESSAGE_NOT_FOUND`, `STREAM_NOT_FOUND`, `WEBHOOK_NOT_FOUND`, `DELIVERY_NOT_FOUND`,
      #   `SECRET_NOT_FOUND`, `API_KEY_NOT_FOUND`, `MEMORY_NOT_FOUND`, `DOCUMENT_NOT_FOUND`,
      #   `SCHEDULE_NOT_FOUND`, `MEMBER_NOT_FOUND`, `BUDGET_NOT_FOUND`, `NOT_FOUND`, `METHOD_NOT_ALLOWED`,
      #   `AGENT_INACTIVE`, `IDEMPOTENCY_KEY_IN_USE`, `PRECONDITION_FAILED`, `CONVERSATION_BUSY`,
      #   `MESSAGE_NOT_AWAITING_APPROVAL`, `APPROVAL_EXPIRED`, `MEMBER_EXISTS`, `LAST_OWNER`,
      #   `PAYLOAD_TOO_LARGE`, `UNSUPPORTED_MEDIA_TYPE`, `IDEMPOTENCY_KEY_REUSED`, `RATE_LIMIT_EXCEEDED`,
      #   `INTERNAL_ERROR`, `MODEL_ERROR`, `AGENT_UNAVAILABLE` (Models::ErrorCode).
      #   @return [String]
      field :code, "code", :string, required: true

      # @!attribute [r] message
      #   @return [String]
      field :message, "message", :string, required: true
    end

    # Data of `tool.approval_required`: the turn paused before tool calls that wait for a person's
    # approval. Ends the stream; answer at `POST …/messages/{messageId}/approve`.
    class ToolApprovalRequired < Agentry::Model
      # @!attribute [r] message_id
      #   The paused message: the id the reply will carry: `msg_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :message_id, "messageId", :string, required: true

      # @!attribute [r] pending_tool_calls
      #   The calls to approve or refuse.
      #   @return [Array<PendingToolCall>]
      field :pending_tool_calls, "pendingToolCalls", [:array, "PendingToolCall"], required: true
    end

    # One tool call the model made during the turn, with its outcome; the data of `tool.result` and an
    # item of a reply's `toolCalls`.
    class ToolCall < Agentry::Model
      # @!attribute [r] id
      #   The call's id, as the model provider gave it.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] name
      #   The tool as the model called it: `<plugin>__<tool>`.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] arguments
      #   Any JSON value. No string in it, and no object key, at any depth, may contain the NUL character
      #   (U+0000); numbers are kept as double-precision floats, so one beyond their range (about ±1.8e308)
      #   is refused.
      #   @return [Object]
      field :arguments, "arguments", :json, required: true

      # @!attribute [r] ok
      #   Whether the tool answered; `false` when it failed, timed out or did not exist.
      #   @return [Boolean]
      field :ok, "ok", :boolean, required: true

      # @!attribute [r] output
      #   The tool's answer, when `ok`.
      #   @return [Object]
      field :output, "output", :json

      # @!attribute [r] error
      #   Why the call failed, when not `ok`: what the model was told (it then answers without it).
      #   @return [String]
      field :error, "error", :string
    end

    # Data of `tool.call`: the model called a tool of the agent's plugins; it runs now.
    class ToolCallStarted < Agentry::Model
      # @!attribute [r] id
      #   The call's id, as the model provider gave it.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] name
      #   The tool as the model called it: `<plugin>__<tool>`.
      #   @return [String]
      field :name, "name", :string, required: true

      # @!attribute [r] arguments
      #   Any JSON value. No string in it, and no object key, at any depth, may contain the NUL character
      #   (U+0000); numbers are kept as double-precision floats, so one beyond their range (about ±1.8e308)
      #   is refused.
      #   @return [Object]
      field :arguments, "arguments", :json, required: true
    end

    # Tokens used, as the provider reported them; zeros when it did not.
    class Usage < Agentry::Model
      # @!attribute [r] input_tokens
      #   @return [Integer]
      field :input_tokens, "inputTokens", :integer, required: true

      # @!attribute [r] output_tokens
      #   @return [Integer]
      field :output_tokens, "outputTokens", :integer, required: true

      # @!attribute [r] total_tokens
      #   `inputTokens + outputTokens`.
      #   @return [Integer]
      field :total_tokens, "totalTokens", :integer, required: true
    end

    # Every bucket of the range, oldest first, zero-filled.
    class UsageBucket < Agentry::Model
      # @!attribute [r] start
      #   The bucket's start, inclusive.
      #   @return [Time]
      field :start, "start", :time, required: true

      # @!attribute [r] end
      #   The bucket's end, exclusive.
      #   @return [Time]
      field :end, "end", :time, required: true

      # @!attribute [r] groups
      #   One group per combination seen in the bucket; without grouping, exactly one (zero-filled when
      #   nothing was sent).
      #   @return [Array<UsageGroup>]
      field :groups, "groups", [:array, "UsageGroup"], required: true
    end

    # One combination of the grouped dimensions, with its figures.
    class UsageGroup < Agentry::Model
      # @!attribute [r] agent_id
      #   The group's agent; present when grouping by `agentId`.
      #   @return [String, nil]
      field :agent_id, "agentId", [:nullable, :string]

      # @!attribute [r] user_id
      #   The group's user id; present when grouping by `userId`; `null` for messages without one and for
      #   erased users.
      #   @return [String, nil]
      field :user_id, "userId", [:nullable, :string]

      # @!attribute [r] model
      #   The group's model; present when grouping by `model`.
      #   @return [String, nil]
      field :model, "model", [:nullable, :string]

      # @!attribute [r] api_key_id
      #   The group's API key; present when grouping by `apiKeyId`.
      #   @return [String, nil]
      field :api_key_id, "apiKeyId", [:nullable, :string]

      # @!attribute [r] messages
      #   Every send, failed ones included.
      #   @return [Integer]
      field :messages, "messages", :integer, required: true

      # @!attribute [r] errors
      #   Sends that ended in an error (any code; cancelled ones are not errors).
      #   @return [Integer]
      field :errors, "errors", :integer, required: true

      # @!attribute [r] input_tokens
      #   Prompt tokens.
      #   @return [Integer]
      field :input_tokens, "inputTokens", :integer, required: true

      # @!attribute [r] output_tokens
      #   Reply tokens.
      #   @return [Integer]
      field :output_tokens, "outputTokens", :integer, required: true

      # @!attribute [r] total_tokens
      #   inputTokens + outputTokens.
      #   @return [Integer]
      field :total_tokens, "totalTokens", :integer, required: true

      # @!attribute [r] cost_usd
      #   What the tokens cost, in US dollars, at the configured prices of each model (docs/api/budgets.md,
      #   "Prices"): exact to the billionth of a dollar.
      #   @return [Numeric]
      field :cost_usd, "costUsd", :number, required: true

      # @!attribute [r] latency_ms
      #   From receipt to the complete reply, of completed sends.
      #   @return [Percentiles]
      field :latency_ms, "latencyMs", "Percentiles", required: true

      # @!attribute [r] time_to_first_token_ms
      #   From receipt to the reply's first text (a reply not streamed: its arrival), of completed sends.
      #   @return [Percentiles]
      field :time_to_first_token_ms, "timeToFirstTokenMs", "Percentiles", required: true
    end

    # Usage from hourly and daily rollups, recorded with each send: counts are exact, percentiles come
    # from sketches.
    class UsageReport < Agentry::Model
      # @!attribute [r] from
      #   The start of the range, rounded down to the granularity.
      #   @return [Time]
      field :from, "from", :time, required: true

      # @!attribute [r] to
      #   The end of the range, exclusive, rounded up to the granularity.
      #   @return [Time]
      field :to, "to", :time, required: true

      # @!attribute [r] granularity
      #   The width of the buckets, in UTC. One of `hour`, `day`.
      #   @return [String]
      field :granularity, "granularity", :string, required: true

      # @!attribute [r] group_by
      #   The dimensions asked for; absent without grouping. One of `agentId`, `userId`, `model`,
      #   `apiKeyId`.
      #   @return [Array<String>]
      field :group_by, "groupBy", [:array, :string]

      # @!attribute [r] buckets
      #   Every bucket of the range, oldest first, zero-filled.
      #   @return [Array<UsageBucket>]
      field :buckets, "buckets", [:array, "UsageBucket"], required: true

      # @!attribute [r] totals
      #   The figures of the whole range.
      #   @return [UsageTotals]
      field :totals, "totals", "UsageTotals", required: true
    end

    # The figures of the whole range.
    class UsageTotals < Agentry::Model
      # @!attribute [r] messages
      #   Every send, failed ones included.
      #   @return [Integer]
      field :messages, "messages", :integer, required: true

      # @!attribute [r] errors
      #   Sends that ended in an error (any code; cancelled ones are not errors).
      #   @return [Integer]
      field :errors, "errors", :integer, required: true

      # @!attribute [r] input_tokens
      #   Prompt tokens.
      #   @return [Integer]
      field :input_tokens, "inputTokens", :integer, required: true

      # @!attribute [r] output_tokens
      #   Reply tokens.
      #   @return [Integer]
      field :output_tokens, "outputTokens", :integer, required: true

      # @!attribute [r] total_tokens
      #   inputTokens + outputTokens.
      #   @return [Integer]
      field :total_tokens, "totalTokens", :integer, required: true

      # @!attribute [r] cost_usd
      #   What the tokens cost, in US dollars, at the configured prices of each model (docs/api/budgets.md,
      #   "Prices"): exact to the billionth of a dollar.
      #   @return [Numeric]
      field :cost_usd, "costUsd", :number, required: true

      # @!attribute [r] latency_ms
      #   From receipt to the complete reply, of completed sends.
      #   @return [Percentiles]
      field :latency_ms, "latencyMs", "Percentiles", required: true

      # @!attribute [r] time_to_first_token_ms
      #   From receipt to the reply's first text (a reply not streamed: its arrival), of completed sends.
      #   @return [Percentiles]
      field :time_to_first_token_ms, "timeToFirstTokenMs", "Percentiles", required: true

      # @!attribute [r] groups
      #   The range's figures per group; present when grouping.
      #   @return [Array<UsageGroup>]
      field :groups, "groups", [:array, "UsageGroup"]
    end

    # The UserErased object.
    class UserErased < Agentry::Model
      # @!attribute [r] user_id
      #   The erased user id.
      #   @return [String]
      field :user_id, "userId", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true

      # @!attribute [r] messages_deleted
      #   Messages this call deleted, in every agent of the account; `0` when there were none left (erasing
      #   again, or a user with no messages).
      #   @return [Integer]
      field :messages_deleted, "messagesDeleted", :integer, required: true
    end

    # A webhook endpoint; its secret is never part of it.
    class Webhook < Agentry::Model
      # @!attribute [r] id
      #   The endpoint's id: `whk_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] url
      #   Where deliveries are POSTed.
      #   @return [String]
      field :url, "url", :string, required: true

      # @!attribute [r] events
      #   The event types delivered to it, or `["*"]` for every type. One of `*`, `agent.created`,
      #   `agent.updated`, `agent.status_changed`, `agent.deleted`, `message.completed`, `message.failed`,
      #   `message.requires_action`, `budget.threshold`.
      #   @return [Array<String>]
      field :events, "events", [:array, :string], required: true

      # @!attribute [r] description
      #   Free text of its owner; empty when none was given.
      #   @return [String]
      field :description, "description", :string, required: true

      # @!attribute [r] enabled
      #   Whether events are delivered to it.
      #   @return [Boolean]
      field :enabled, "enabled", :boolean, required: true

      # @!attribute [r] disabled_reason
      #   Why the service disabled it: it answered `410 Gone`, or every attempt failed for 5 days. `null`
      #   while it is enabled, or when its owner disabled it.
      #   @return [String, nil]
      field :disabled_reason, "disabledReason", [:nullable, :string], required: true

      # @!attribute [r] created_at
      #   When it was created.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] updated_at
      #   When it last changed (an update, a rotation, a disabling).
      #   @return [Time]
      field :updated_at, "updatedAt", :time, required: true
    end

    # The WebhookCreated object.
    class WebhookCreated < Agentry::Model
      # @!attribute [r] id
      #   The endpoint's id: `whk_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] url
      #   Where deliveries are POSTed.
      #   @return [String]
      field :url, "url", :string, required: true

      # @!attribute [r] events
      #   The event types delivered to it, or `["*"]` for every type. One of `*`, `agent.created`,
      #   `agent.updated`, `agent.status_changed`, `agent.deleted`, `message.completed`, `message.failed`,
      #   `message.requires_action`, `budget.threshold`.
      #   @return [Array<String>]
      field :events, "events", [:array, :string], required: true

      # @!attribute [r] description
      #   Free text of its owner; empty when none was given.
      #   @return [String]
      field :description, "description", :string, required: true

      # @!attribute [r] enabled
      #   Whether events are delivered to it.
      #   @return [Boolean]
      field :enabled, "enabled", :boolean, required: true

      # @!attribute [r] disabled_reason
      #   Why the service disabled it: it answered `410 Gone`, or every attempt failed for 5 days. `null`
      #   while it is enabled, or when its owner disabled it.
      #   @return [String, nil]
      field :disabled_reason, "disabledReason", [:nullable, :string], required: true

      # @!attribute [r] created_at
      #   When it was created.
      #   @return [Time]
      field :created_at, "createdAt", :time, required: true

      # @!attribute [r] updated_at
      #   When it last changed (an update, a rotation, a disabling).
      #   @return [Time]
      field :updated_at, "updatedAt", :time, required: true

      # @!attribute [r] secret
      #   The signing secret: `whsec_` and the base64 of 24 random bytes. Shown this once (on create and on
      #   rotation); verify deliveries with it.
      #   @return [String]
      field :secret, "secret", :string, required: true
    end

    # The WebhookDeleted object.
    class WebhookDeleted < Agentry::Model
      # @!attribute [r] id
      #   The deleted endpoint's id: `whk_` and a ULID. Treat it as opaque.
      #   @return [String]
      field :id, "id", :string, required: true

      # @!attribute [r] deleted
      #   @return [true]
      field :deleted, "deleted", :boolean, required: true
    end
  end
end
