# frozen_string_literal: true

# Generated from sdks/openapi.json by sdks/generator (src/ruby.ts) — do not edit.
# Regenerate with: pnpm --filter @agentry/sdk-generator generate

module Agentry
  # The API's resources, as `client.agents`, `client.agents.messages`, ...
  module Resources
    # The resources a client offers (included by Agentry::Client).
    module Accessors
      # Create, list, read, update and delete agents; import and export elizaOS character files.
      # @return [Agents]
      def agents
        @agents ||= Agents.new(@transport)
      end

      # Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`,
      # `history:delete`).
      # @return [Users]
      def users
        @users ||= Users.new(@transport)
      end

      # Sends, tokens, errors and latency by hour or day, grouped as asked (scope `usage:read`).
      # @return [Usage]
      def usage
        @usage ||= Usage.new(@transport)
      end

      # Endpoints that receive the account's events, signed per Standard Webhooks; their secrets and
      # delivery logs (scope `webhooks:manage`).
      # @return [WebhookEndpoints]
      def webhook_endpoints
        @webhook_endpoints ||= WebhookEndpoints.new(@transport)
      end

      # The plugin catalogue (any key) and agents' secrets, which plugins read (scope `plugins:manage`).
      # @return [Plugins]
      def plugins
        @plugins ||= Plugins.new(@transport)
      end

      # Manage the account's API keys (scope `keys:manage`).
      # @return [ApiKeys]
      def api_keys
        @api_keys ||= ApiKeys.new(@transport)
      end

      # The people of the account and their roles, which decide what their console sessions may do (scopes
      # `members:read`, `members:write`).
      # @return [Members]
      def members
        @members ||= Members.new(@transport)
      end

      # Spend limits in tokens or US dollars per day or month for the account, an agent or a key (scopes
      # `budgets:read`, `budgets:write`).
      # @return [Budgets]
      def budgets
        @budgets ||= Budgets.new(@transport)
      end

      # Who changed what in the account, when and from where: every change through any route, the console or
      # the admin CLI (scope `audit:read`).
      # @return [AuditEvents]
      def audit_events
        @audit_events ||= AuditEvents.new(@transport)
      end
    end

    # Create, list, read, update and delete agents; import and export elizaOS character files.
    class Agents < Agentry::Resource
      # Talk to an agent, with or without streaming.
      # @return [Agents::Messages]
      def messages
        @messages ||= Messages.new(@transport)
      end

      # Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`,
      # `history:delete`).
      # @return [Agents::Conversations]
      def conversations
        @conversations ||= Conversations.new(@transport)
      end

      # Talk to an agent, with or without streaming.
      # @return [Agents::Runs]
      def runs
        @runs ||= Runs.new(@transport)
      end

      # Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`,
      # `history:delete`).
      # @return [Agents::Memories]
      def memories
        @memories ||= Memories.new(@transport)
      end

      # Create, list, read, update and delete agents; import and export elizaOS character files.
      # @return [Agents::Documents]
      def documents
        @documents ||= Documents.new(@transport)
      end

      # Create, list, read, update and delete agents; import and export elizaOS character files.
      # @return [Agents::Schedules]
      def schedules
        @schedules ||= Schedules.new(@transport)
      end

      # Sends, tokens, errors and latency by hour or day, grouped as asked (scope `usage:read`).
      # @return [Agents::Usage]
      def usage
        @usage ||= Usage.new(@transport)
      end

      # The plugin catalogue (any key) and agents' secrets, which plugins read (scope `plugins:manage`).
      # @return [Agents::Secrets]
      def secrets
        @secrets ||= Secrets.new(@transport)
      end

      # Create, list, read, update and delete agents; import and export elizaOS character files.
      # @return [Agents::Clients]
      def clients
        @clients ||= Clients.new(@transport)
      end

      # Create an agent.
      #
      # Creates an agent in the caller's account. It starts `active`. `name` is required; omitted arrays are
      # stored as `[]`, objects as `{}`, `modelProvider` and `model` as `null` (the server's defaults,
      # resolved when a message is sent). Unknown fields, and `id`, `status`, `statusReason`, `createdAt`,
      # `updatedAt`, `apiEndpoint`, are refused. An account holds at most its plan's `maxAgents` agents (100
      # by default).
      #
      # `modelProvider` may name any provider this server has a client for (`openai`, `anthropic`, `local`),
      # configured here or not; one with no configuration is written all the same, and `warnings` names the
      # variable to set (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`); until then its messages fail with `502
      # MODEL_ERROR`.
      #
      # `clients` may name any platform; an item that will not connect is written all the same, with a
      # warning for `clients[<i>]`: a platform no connector runs (any but `telegram`, `discord` and `slack`)
      # is kept and listed as `inert`, and a run platform whose agent secrets are not set
      # (`TELEGRAM_BOT_TOKEN`; `DISCORD_BOT_TOKEN`; `SLACK_BOT_TOKEN` and `SLACK_SIGNING_SECRET`) does not
      # connect until each named secret is set with `PUT /v1/agents/{agentId}/secrets/{name}`. A new agent
      # holds no secrets yet, so naming a run platform on create always warns of them.
      #
      # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `createPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param name [String] Name of the agent: 1 to 200 characters once surrounding whitespace is trimmed;
      #   stored trimmed.
      # @param bio [Array<String>] Biographical statements about the agent.
      # @param personality [Hash{String, Symbol => Object}] Personality traits and communication style, as a
      #   JSON object.
      # @param knowledge [Array<String>] Areas of expertise and knowledge.
      # @param goals [Array<String>] Objectives and motivations.
      # @param clients [Array<String, Models::ClientIntegration, Hash>] Platform integrations: a platform
      #   name, or an object with a `type` and that platform's configuration.
      # @param settings [Models::AgentSettings, Hash] Platform-specific configuration, as a JSON object.
      #   `temperature` and `maxTokens` tune generation; other keys are kept as given.
      # @param model_provider [String, Symbol] The AI model provider. Unset: the server's default provider
      #   (`DEFAULT_MODEL_PROVIDER`), resolved when a message is sent. Every provider this server has a client
      #   for is accepted, configured here or not; one with no configuration (no `OPENAI_API_KEY`, say) is
      #   written with a `warnings` entry naming the variable to set, and messages to the agent fail with `502
      #   MODEL_ERROR` until it is set. Any other value is refused with `400`. One of `openai`, `anthropic`,
      #   `local` (Models::ModelProvider).
      # @param model [String] The model to use, as the provider names it: 1 to 200 characters once trimmed,
      #   stored trimmed. Unset: the provider's default model. The hosted providers (`openai`, `anthropic`)
      #   take any name and refuse an unknown one when called (`502 MODEL_ERROR`); `local` serves only the
      #   model files the deployment runs, named in the document it serves at `/v1/openapi.json`, and any
      #   other name is refused with `400`, whether `local` is named or is the default provider.
      # @param plugins [Array<String, Models::PluginConfig, Hash>] Plugin configurations: a plugin name
      #   (enabled, with its default config), or an object `{name, enabled?, config?}`. An enabled plugin must
      #   be one `GET /v1/plugins` lists and its `config` must satisfy that plugin's `configSchema`; otherwise
      #   `400 INVALID_REQUEST` naming `plugins[i]` or the config's field. A disabled plugin is kept as given,
      #   known or not, and does nothing.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Agent]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`, `INSUFFICIENT_QUOTA`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def create(
        name:,
        bio: nil,
        personality: nil,
        knowledge: nil,
        goals: nil,
        clients: nil,
        settings: nil,
        model_provider: nil,
        model: nil,
        plugins: nil,
        request_options: nil
      )
        body = {}
        body["name"] = name
        body["bio"] = bio unless bio.nil?
        body["personality"] = personality unless personality.nil?
        body["knowledge"] = knowledge unless knowledge.nil?
        body["goals"] = goals unless goals.nil?
        body["clients"] = clients unless clients.nil?
        body["settings"] = settings unless settings.nil?
        body["modelProvider"] = model_provider unless model_provider.nil?
        body["model"] = model unless model.nil?
        body["plugins"] = plugins unless plugins.nil?
        api_request(:post, "/agents", type: "Agent", body: body, options: request_options)
      end

      # List agents.
      #
      # Lists the caller's agents a page at a time, newest first unless `sortBy` and `order` say otherwise.
      # Out-of-range or unknown query parameters are refused, never clamped; a parameter given twice is
      # refused.
      #
      # Requires the `agents:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param page [Integer] Page number, from 1. Server default: `1`.
      # @param limit [Integer] Agents per page, from 1 to 100. Server default: `20`.
      # @param status [String, Symbol] Only agents with this status. One of `active`, `inactive`, `error`
      #   (Models::AgentStatus).
      # @param sort_by [String, Symbol] Sort field; ties are broken by id. `name` compares names by code
      #   point. Server default: `createdAt`. One of `createdAt`, `name`, `status`.
      # @param order [String, Symbol] Sort order. Server default: `desc`. One of `asc`, `desc`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Agentry::Page<Models::Agent>] the first page asked for; enumerating it walks every page
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(page: nil, limit: nil, status: nil, sort_by: nil, order: nil, request_options: nil)
        query = {"page" => page, "limit" => limit, "status" => status, "sortBy" => sort_by, "order" => order}
        api_paginate(
          "/agents",
          query: query,
          pagination: { page_parameter: "page", items_field: "data", info_field: "pagination",
                        has_more_field: "hasMore", item_type: "Agent", info_type: "Pagination" },
          options: request_options
        )
      end

      # Get an agent.
      #
      # Returns the full agent record, with its version in `ETag` (`W/"<updatedAt>"`). With `If-None-Match`
      # naming the current version, the answer is `304 Not Modified` without a body.
      #
      # Requires the `agents:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
      #   form, is answered `404 AGENT_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Models::Agent]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def get(agent_id, request_options: nil)
        api_request(
          :get,
          "/agents/#{path_segment(:agent_id, agent_id)}",
          type: "Agent",
          options: request_options
        )
      end

      # Update an agent.
      #
      # Changes only the fields supplied; the others stay as they are. `status` may be set to `active` or
      # `inactive` (`inactive` keeps all data but refuses messages). `null` resets `modelProvider` or
      # `model` to the server's default. A PATCH that supplies `modelProvider`, `model` or `settings` takes
      # an agent out of `error` (back to `active`), as does one that sets `status`.
      #
      # `warnings` are those of the agent as updated, whether or not the PATCH sends the fields: a
      # `modelProvider` with no configuration here, and each `clients[<i>]` that will not connect, a
      # platform no connector runs (any but `telegram`, `discord` and `slack`: kept, listed as `inert`) or a
      # run platform the agent does not hold the secrets of, naming each to set with `PUT
      # /v1/agents/{agentId}/secrets/{name}`.
      #
      # With `If-Match` (the agent's `ETag`), the update happens only if no other change came since that
      # version; otherwise `412 PRECONDITION_FAILED`: read the agent again and decide. The answer's `ETag`
      # is the updated agent's.
      #
      # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
      #   form, is answered `404 AGENT_NOT_FOUND`.
      # @param name [String] Name of the agent: 1 to 200 characters once surrounding whitespace is trimmed;
      #   stored trimmed.
      # @param bio [Array<String>] Biographical statements about the agent.
      # @param personality [Hash{String, Symbol => Object}] Personality traits and communication style, as a
      #   JSON object.
      # @param knowledge [Array<String>] Areas of expertise and knowledge.
      # @param goals [Array<String>] Objectives and motivations.
      # @param clients [Array<String, Models::ClientIntegration, Hash>] Platform integrations: a platform
      #   name, or an object with a `type` and that platform's configuration.
      # @param settings [Models::AgentSettings, Hash] Platform-specific configuration, as a JSON object.
      #   `temperature` and `maxTokens` tune generation; other keys are kept as given.
      # @param model_provider [String, Symbol, nil] The AI model provider; `null` resets it to the server's
      #   default. As on create, a provider with no configuration here is written with a warning. Sent without
      #   `model`, it is checked with the agent's current model. `nil` sends `null`; leave it out to keep the
      #   current value. One of `openai`, `anthropic`, `local` (Models::ModelProvider).
      # @param model [String, nil] The model to use; `null` resets it to the provider's default. It must be
      #   one the provider serves, as on create; sent without `modelProvider`, it is checked against the
      #   agent's current provider, which no schema can state. `nil` sends `null`; leave it out to keep the
      #   current value.
      # @param plugins [Array<String, Models::PluginConfig, Hash>] Plugin configurations: a plugin name
      #   (enabled, with its default config), or an object `{name, enabled?, config?}`. An enabled plugin must
      #   be one `GET /v1/plugins` lists and its `config` must satisfy that plugin's `configSchema`; otherwise
      #   `400 INVALID_REQUEST` naming `plugins[i]` or the config's field. A disabled plugin is kept as given,
      #   known or not, and does nothing.
      # @param status [String, Symbol] `active` or `inactive`. `error` is set only by the service. One of
      #   `active`, `inactive`.
      # @param if_match [String] The agent's ETag as last read (`W/"<updatedAt>"`; the quoted value without
      #   `W/` is taken too): the update happens only if the agent has not changed since, checked atomically
      #   with the write; otherwise `412 PRECONDITION_FAILED` and nothing changes. `*` or no header:
      #   unconditional. Takes the ETag as answered, or the agent's `updated_at`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Agent]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::ConflictError] 412 `PRECONDITION_FAILED`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def update(
        agent_id,
        name: nil,
        bio: nil,
        personality: nil,
        knowledge: nil,
        goals: nil,
        clients: nil,
        settings: nil,
        model_provider: Agentry::OMIT,
        model: Agentry::OMIT,
        plugins: nil,
        status: nil,
        if_match: nil,
        request_options: nil
      )
        body = {}
        body["name"] = name unless name.nil?
        body["bio"] = bio unless bio.nil?
        body["personality"] = personality unless personality.nil?
        body["knowledge"] = knowledge unless knowledge.nil?
        body["goals"] = goals unless goals.nil?
        body["clients"] = clients unless clients.nil?
        body["settings"] = settings unless settings.nil?
        body["modelProvider"] = model_provider unless model_provider.equal?(Agentry::OMIT)
        body["model"] = model unless model.equal?(Agentry::OMIT)
        body["plugins"] = plugins unless plugins.nil?
        body["status"] = status unless status.nil?
        request_options = with_headers(request_options, { "If-Match" => entity_tag(if_match) })
        api_request(
          :patch,
          "/agents/#{path_segment(:agent_id, agent_id)}",
          type: "Agent",
          body: body,
          options: request_options
        )
      end

      # Delete an agent.
      #
      # Deletes the agent permanently: its configuration, conversation history, usage metrics and logs are
      # removed and its platform integrations disconnected. Irreversible; nothing of it can be read
      # afterwards. Deleting several agents takes one request each.
      #
      # With `If-Match` (the agent's `ETag`), the agent is deleted only if it has not changed since that
      # version; otherwise `412 PRECONDITION_FAILED` and it stays.
      #
      # Requires the `agents:delete` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
      #   form, is answered `404 AGENT_NOT_FOUND`.
      # @param if_match [String] The agent's ETag as last read (`W/"<updatedAt>"`; the quoted value without
      #   `W/` is taken too): the delete happens only if the agent has not changed since, checked atomically
      #   with the write; otherwise `412 PRECONDITION_FAILED` and nothing changes. `*` or no header:
      #   unconditional. Takes the ETag as answered, or the agent's `updated_at`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::AgentDeleted]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::ConflictError] 412 `PRECONDITION_FAILED`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def delete(agent_id, if_match: nil, request_options: nil)
        request_options = with_headers(request_options, { "If-Match" => entity_tag(if_match) })
        api_request(
          :delete,
          "/agents/#{path_segment(:agent_id, agent_id)}",
          type: "AgentDeleted",
          options: request_options
        )
      end

      # Import an elizaOS character file.
      #
      # Creates an agent from an elizaOS character file (v0.x, 1.x, or with grouped `messageExamples`), sent
      # as the body; its JSON Schema is also served at `/v1/schemas/character.json`. Only `name` is
      # required. `name`, `bio` (a string is one item), the strings of `knowledge`, `clients`, `plugins` and
      # `settings` map to the agent's own fields; `settings.model` becomes `model`; `modelProvider` is
      # mapped (`anthropic` stays, `llama_local` becomes `local`, the OpenAI-compatible names become
      # `openai`), the name given kept in `personality.sourceModelProvider`. `system`, `username`, `lore`,
      # `topics`, `adjectives`, `style`, `messageExamples`, `postExamples` and `templates` are kept in
      # `personality` under their names (empty ones nowhere); file and folder references of `knowledge` in
      # `personality.knowledgeSources`, with their positions; fields the schema does not name in
      # `personality.extraFields`. `settings.secrets` and `secrets` are stored in the agent's
      # `settings.secrets`, which no read or export ever returns. Plugins not in the plugin catalogue are
      # kept as `{name, enabled: false}`. `settings.agentry`, written by an export, puts back what the
      # elizaOS format has no field for.
      #
      # The answer carries `warnings`, `[{field, issue}]` by JSON path in the file, for what was kept but
      # will not act. Every problem of the file is answered at once, as `details` by JSON path. With
      # `dryRun=true` nothing is stored: `200` with the agent it would create. With `useDefaultModel=true`
      # the agent uses this server's default provider and model (`modelProvider` and `model` `null`), the
      # file's kept in `personality.sourceModelProvider` and `personality.sourceModel`; the export puts the
      # model back in `settings.model`. As on create, a provider with no configuration here is taken with a
      # warning naming the variable to set, each of the file's `clients` that will not connect has a warning
      # at its path (a platform no connector runs; `telegram`, `discord` or `slack`, whose agent secrets the
      # new agent does not hold yet), a provider that serves only some models (`local`) must be given one of
      # them, and the account holds at most its plan's `maxAgents` agents (100 by default).
      #
      # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `createPerMinute`.
      #
      # With `dry_run: true` it returns a Models::CharacterImportPreview instead.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param character [Hash, String, Pathname] An elizaOS character file (v0.x, 1.x, or with grouped
      #   `messageExamples`), as `POST /v1/agents/import` takes it. Only `name` is required. Fields not listed
      #   here are kept, untouched, in `personality.extraFields` for the export, with a warning. A String or
      #   Pathname is the path of a JSON file holding it, which is read and sent as it is.
      # @param dry_run [Boolean] `true`: check the file and answer `200` with the agent it would create and
      #   the warnings; nothing is stored and the quota is not checked. Server default: `false`.
      # @param use_default_model [Boolean] `true`: the agent uses this server's default provider and model
      #   (`modelProvider` and `model` `null`); the file's are kept in `personality.sourceModelProvider` and
      #   `personality.sourceModel`, and the export puts them back. Server default: `false`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::CharacterImport, Models::CharacterImportPreview]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`, `INSUFFICIENT_QUOTA`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def import_character(character, dry_run: nil, use_default_model: nil, request_options: nil)
        query = {"dryRun" => dry_run, "useDefaultModel" => use_default_model}
        type = dry_run == true ? "CharacterImportPreview" : "CharacterImport"
        api_request(
          :post,
          "/agents/import",
          type: type,
          query: query,
          body: json_object_argument(:character, character),
          options: request_options,
          field: nil,
          data_as: "agent"
        )
      end

      # Export an agent as an elizaOS character file.
      #
      # The agent as an elizaOS 1.x character file, as a download: the bare file, without the envelope, with
      # `Content-Disposition: attachment` and a file name made from the agent's name. Fields the 1.x format
      # has at the top are there; everything else of the agent (`goals`, `clients`, `modelProvider`, each
      # plugin's `enabled` and `config`, `personality` keys without a 1.x field) is under
      # `settings.agentry`, so importing the file gives an agent equal to this one in every field but its
      # id, times and `apiEndpoint`. `plugins` names every plugin. Secrets never leave: `settings.secrets`
      # and `secrets` are empty.
      #
      # Requires the `agents:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
      #   form, is answered `404 AGENT_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Models::ExportedCharacterFile]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def export_character(agent_id, request_options: nil)
        api_request(
          :get,
          "/agents/#{path_segment(:agent_id, agent_id)}/character",
          type: "ExportedCharacterFile",
          options: request_options,
          field: nil
        )
      end

      # Talk to an agent, with or without streaming.
      class Messages < Agentry::Resource
        # The events `stream` yields (`sendMessage` with `stream: true`), with the type of their data.
        SEND_MESSAGE_EVENTS = {
          "message.started" => "MessageStarted",
          "message.delta" => "MessageDelta",
          "tool.call" => "ToolCallStarted",
          "tool.result" => "ToolCall",
          "tool.approval_required" => "ToolApprovalRequired",
          "message.completed" => "Reply",
          "error" => "StreamError"
        }.freeze

        # Send a message to an agent.
        #
        # Sends a text message and returns the agent's reply. Context is kept per agent, `userId` and
        # `roomId`: send the same `userId` for the same user; calls without them share one default
        # conversation. `context` applies to this message only. The model may call the tools of the agent's
        # enabled plugins, up to `settings.maxToolSteps` rounds; the reply's `toolCalls` lists the calls with
        # their outcomes, and its `usage` counts every model call of the turn. An agent in `error` is still
        # called (a success takes it out of `error`); an `inactive` one refuses messages.
        #
        # With `stream: true` the reply arrives as server-sent events (`text/event-stream`):
        # `message.started`, any number of `message.delta` (and, when the model calls tools of the agent's
        # plugins, `tool.call` and `tool.result` between them), then exactly one of `message.completed` or
        # `error`, after which the stream closes. Each event has an `id:` (its sequence number, from 1), an
        # `event:` name and JSON `data:`; the `text/event-stream` schema, `MessageStreamEvent`, describes each
        # event and the JSON of its data. A `: ping` comment line is sent after every 15 seconds of silence.
        # Anything that fails before the stream starts (validation, 404, 409, 429, a provider that is down) is
        # an ordinary JSON error response. Only a complete reply is stored.
        #
        # Every stream can be resumed for `STREAM_RETENTION` (1 hour by default) after it ends, at `GET
        # /v1/agents/{agentId}/messages/{messageId}/events` with `Last-Event-ID`. With `onDisconnect:
        # "continue"` the reply is generated to its end and stored even when the caller goes away (it still
        # holds a concurrency slot until then); the default, `cancel`, stops it.
        #
        # With `background: true` the answer is `202` with the reply's id and `status: "pending"` at once; the
        # reply is generated whatever happens to the caller, and `GET
        # /v1/agents/{agentId}/messages/{messageId}` tells whether it is `pending`, `completed` (with the
        # reply) or `failed` (with the error). It holds a concurrency slot until it ends.
        #
        # One message of a conversation is answered at a time. A message sent while its conversation has one
        # in progress does what `onConflict` says (else the agent's `settings.concurrentMessages`, else
        # `enqueue`): `enqueue` waits its turn, in the order messages came, across every conversation
        # instance; `reject` answers `409 CONVERSATION_BUSY`; `interrupt` cancels the message in progress,
        # whose reply is stored with the text it had and `finishReason: "cancelled"` (a background one reads
        # `status: "cancelled"`), then answers this one.
        #
        # Requires the `messages:send` scope. Counts against `requestsPerMinute`, `messagesPerMinute`,
        # `concurrentMessages`.
        #
        # For the answer to `background: true`, call `create_background`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param text [String] The message text.
        # @param user_id [String] Identifies the user, for conversation continuity: send the same value for
        #   the same user. Unset is a user of its own.
        # @param room_id [String] Identifies the conversation room, for multi-user conversations. Unset is a
        #   room of its own.
        # @param context [Hash{String, Symbol => Object}] Extra context for this message only: the model
        #   receives it as system context; it is never stored.
        # @param on_disconnect [String, Symbol] What a stream does when the caller goes away: `cancel` stops
        #   generating (nothing is stored); `continue` generates the whole reply and stores it, and the stream
        #   can be resumed. Default `cancel`. One of `cancel`, `continue`.
        # @param on_conflict [String, Symbol] What this message does when its conversation (the agent,
        #   `userId` and `roomId`) has a message in progress: `reject` answers 409 `CONVERSATION_BUSY`;
        #   `enqueue` answers it after the messages before it, in the order they came; `interrupt` cancels the
        #   message in progress (its reply is stored with the text it had, `finishReason: "cancelled"`) and
        #   every one waiting before it, then answers this one. Default: the agent's
        #   `settings.concurrentMessages`, else `enqueue`. One of `reject`, `enqueue`, `interrupt`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Reply]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::APIError] 402 `BUDGET_EXCEEDED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `AGENT_INACTIVE`, `IDEMPOTENCY_KEY_IN_USE`, `CONVERSATION_BUSY`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 502 `MODEL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def create(
          agent_id,
          text:,
          user_id: nil,
          room_id: nil,
          context: nil,
          on_disconnect: nil,
          on_conflict: nil,
          request_options: nil
        )
          body = {}
          body["text"] = text
          body["userId"] = user_id unless user_id.nil?
          body["roomId"] = room_id unless room_id.nil?
          body["context"] = context unless context.nil?
          body["onDisconnect"] = on_disconnect unless on_disconnect.nil?
          body["onConflict"] = on_conflict unless on_conflict.nil?
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/messages",
            type: "Reply",
            body: body,
            options: request_options
          )
        end

        # Send a message to an agent, streaming the reply as server-sent events.
        #
        # Sends a text message and returns the agent's reply. Context is kept per agent, `userId` and
        # `roomId`: send the same `userId` for the same user; calls without them share one default
        # conversation. `context` applies to this message only. The model may call the tools of the agent's
        # enabled plugins, up to `settings.maxToolSteps` rounds; the reply's `toolCalls` lists the calls with
        # their outcomes, and its `usage` counts every model call of the turn. An agent in `error` is still
        # called (a success takes it out of `error`); an `inactive` one refuses messages.
        #
        # With `stream: true` the reply arrives as server-sent events (`text/event-stream`):
        # `message.started`, any number of `message.delta` (and, when the model calls tools of the agent's
        # plugins, `tool.call` and `tool.result` between them), then exactly one of `message.completed` or
        # `error`, after which the stream closes. Each event has an `id:` (its sequence number, from 1), an
        # `event:` name and JSON `data:`; the `text/event-stream` schema, `MessageStreamEvent`, describes each
        # event and the JSON of its data. A `: ping` comment line is sent after every 15 seconds of silence.
        # Anything that fails before the stream starts (validation, 404, 409, 429, a provider that is down) is
        # an ordinary JSON error response. Only a complete reply is stored.
        #
        # Every stream can be resumed for `STREAM_RETENTION` (1 hour by default) after it ends, at `GET
        # /v1/agents/{agentId}/messages/{messageId}/events` with `Last-Event-ID`. With `onDisconnect:
        # "continue"` the reply is generated to its end and stored even when the caller goes away (it still
        # holds a concurrency slot until then); the default, `cancel`, stops it.
        #
        # With `background: true` the answer is `202` with the reply's id and `status: "pending"` at once; the
        # reply is generated whatever happens to the caller, and `GET
        # /v1/agents/{agentId}/messages/{messageId}` tells whether it is `pending`, `completed` (with the
        # reply) or `failed` (with the error). It holds a concurrency slot until it ends.
        #
        # One message of a conversation is answered at a time. A message sent while its conversation has one
        # in progress does what `onConflict` says (else the agent's `settings.concurrentMessages`, else
        # `enqueue`): `enqueue` waits its turn, in the order messages came, across every conversation
        # instance; `reject` answers `409 CONVERSATION_BUSY`; `interrupt` cancels the message in progress,
        # whose reply is stored with the text it had and `finishReason: "cancelled"` (a background one reads
        # `status: "cancelled"`), then answers this one.
        #
        # Requires the `messages:send` scope. Counts against `requestsPerMinute`, `messagesPerMinute`,
        # `concurrentMessages`.
        #
        # Without a block, returns an Agentry::MessageStream, read when you iterate it (or call `text` /
        # `final_message`). With a block, reads the stream at once, yields each event, and returns the
        # completed reply (`nil` when the block leaves early). Leaving the loop early closes the connection. A
        # failure before the stream starts is retried as for the call without streaming; once started, a
        # stream is never retried. The events:
        # - `message.started` (data: Models::MessageStarted): First event: the provider accepted the message.
        # - `message.delta` (data: Models::MessageDelta): The next piece of the reply's text; the pieces
        #   joined are the reply's text.
        # - `tool.call` (data: Models::ToolCallStarted): The model called a tool; its `tool.result` follows
        #   (calls made together run concurrently).
        # - `tool.result` (data: Models::ToolCall): A tool call's outcome, given to the model, which then goes
        #   on answering.
        # - `tool.approval_required` (data: Models::ToolApprovalRequired): The turn paused before tool calls
        #   that wait for a person's approval. Ends the stream; the message is `requires_action` until
        #   answered.
        # - `message.completed` (data: Models::Reply): The complete reply, the same object as the non-stream
        #   response's `data`. Ends the stream.
        # - `error` (data: Models::StreamError): The reply failed after the stream started. Ends the stream.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param text [String] The message text.
        # @param user_id [String] Identifies the user, for conversation continuity: send the same value for
        #   the same user. Unset is a user of its own.
        # @param room_id [String] Identifies the conversation room, for multi-user conversations. Unset is a
        #   room of its own.
        # @param context [Hash{String, Symbol => Object}] Extra context for this message only: the model
        #   receives it as system context; it is never stored.
        # @param on_disconnect [String, Symbol] What a stream does when the caller goes away: `cancel` stops
        #   generating (nothing is stored); `continue` generates the whole reply and stores it, and the stream
        #   can be resumed. Default `cancel`. One of `cancel`, `continue`.
        # @param on_conflict [String, Symbol] What this message does when its conversation (the agent,
        #   `userId` and `roomId`) has a message in progress: `reject` answers 409 `CONVERSATION_BUSY`;
        #   `enqueue` answers it after the messages before it, in the order they came; `interrupt` cancels the
        #   message in progress (its reply is stored with the text it had, `finishReason: "cancelled"`) and
        #   every one waiting before it, then answers this one. Default: the agent's
        #   `settings.concurrentMessages`, else `enqueue`. One of `reject`, `enqueue`, `interrupt`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @yieldparam event [Agentry::StreamEvent] each event, in order
        # @return [Agentry::MessageStream, Models::ToolApprovalRequired, nil]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::APIError] 402 `BUDGET_EXCEEDED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `AGENT_INACTIVE`, `IDEMPOTENCY_KEY_IN_USE`, `CONVERSATION_BUSY`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 502 `MODEL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def stream(
          agent_id,
          text:,
          user_id: nil,
          room_id: nil,
          context: nil,
          on_disconnect: nil,
          on_conflict: nil,
          request_options: nil,
          &block
        )
          body = {}
          body["text"] = text
          body["userId"] = user_id unless user_id.nil?
          body["roomId"] = room_id unless room_id.nil?
          body["context"] = context unless context.nil?
          body["onDisconnect"] = on_disconnect unless on_disconnect.nil?
          body["onConflict"] = on_conflict unless on_conflict.nil?
          body["stream"] = true
          api_stream(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/messages",
            body: body,
            events: SEND_MESSAGE_EVENTS,
            options: request_options,
            &block
          )
        end

        # Send a message to an agent, sending `background: true`: the message is accepted, and its reply is
        # being generated. Without it, when the turn paused before tool calls that wait for approval: `status:
        # "requires_action"` with `pendingToolCalls`.
        #
        # Returns the 202 answer. Otherwise as `create`:
        #
        # Sends a text message and returns the agent's reply. Context is kept per agent, `userId` and
        # `roomId`: send the same `userId` for the same user; calls without them share one default
        # conversation. `context` applies to this message only. The model may call the tools of the agent's
        # enabled plugins, up to `settings.maxToolSteps` rounds; the reply's `toolCalls` lists the calls with
        # their outcomes, and its `usage` counts every model call of the turn. An agent in `error` is still
        # called (a success takes it out of `error`); an `inactive` one refuses messages.
        #
        # With `stream: true` the reply arrives as server-sent events (`text/event-stream`):
        # `message.started`, any number of `message.delta` (and, when the model calls tools of the agent's
        # plugins, `tool.call` and `tool.result` between them), then exactly one of `message.completed` or
        # `error`, after which the stream closes. Each event has an `id:` (its sequence number, from 1), an
        # `event:` name and JSON `data:`; the `text/event-stream` schema, `MessageStreamEvent`, describes each
        # event and the JSON of its data. A `: ping` comment line is sent after every 15 seconds of silence.
        # Anything that fails before the stream starts (validation, 404, 409, 429, a provider that is down) is
        # an ordinary JSON error response. Only a complete reply is stored.
        #
        # Every stream can be resumed for `STREAM_RETENTION` (1 hour by default) after it ends, at `GET
        # /v1/agents/{agentId}/messages/{messageId}/events` with `Last-Event-ID`. With `onDisconnect:
        # "continue"` the reply is generated to its end and stored even when the caller goes away (it still
        # holds a concurrency slot until then); the default, `cancel`, stops it.
        #
        # With `background: true` the answer is `202` with the reply's id and `status: "pending"` at once; the
        # reply is generated whatever happens to the caller, and `GET
        # /v1/agents/{agentId}/messages/{messageId}` tells whether it is `pending`, `completed` (with the
        # reply) or `failed` (with the error). It holds a concurrency slot until it ends.
        #
        # One message of a conversation is answered at a time. A message sent while its conversation has one
        # in progress does what `onConflict` says (else the agent's `settings.concurrentMessages`, else
        # `enqueue`): `enqueue` waits its turn, in the order messages came, across every conversation
        # instance; `reject` answers `409 CONVERSATION_BUSY`; `interrupt` cancels the message in progress,
        # whose reply is stored with the text it had and `finishReason: "cancelled"` (a background one reads
        # `status: "cancelled"`), then answers this one.
        #
        # Requires the `messages:send` scope. Counts against `requestsPerMinute`, `messagesPerMinute`,
        # `concurrentMessages`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param text [String] The message text.
        # @param user_id [String] Identifies the user, for conversation continuity: send the same value for
        #   the same user. Unset is a user of its own.
        # @param room_id [String] Identifies the conversation room, for multi-user conversations. Unset is a
        #   room of its own.
        # @param context [Hash{String, Symbol => Object}] Extra context for this message only: the model
        #   receives it as system context; it is never stored.
        # @param on_disconnect [String, Symbol] What a stream does when the caller goes away: `cancel` stops
        #   generating (nothing is stored); `continue` generates the whole reply and stores it, and the stream
        #   can be resumed. Default `cancel`. One of `cancel`, `continue`.
        # @param on_conflict [String, Symbol] What this message does when its conversation (the agent,
        #   `userId` and `roomId`) has a message in progress: `reject` answers 409 `CONVERSATION_BUSY`;
        #   `enqueue` answers it after the messages before it, in the order they came; `interrupt` cancels the
        #   message in progress (its reply is stored with the text it had, `finishReason: "cancelled"`) and
        #   every one waiting before it, then answers this one. Default: the agent's
        #   `settings.concurrentMessages`, else `enqueue`. One of `reject`, `enqueue`, `interrupt`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::BackgroundMessageAccepted]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::APIError] 402 `BUDGET_EXCEEDED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `AGENT_INACTIVE`, `IDEMPOTENCY_KEY_IN_USE`, `CONVERSATION_BUSY`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 502 `MODEL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def create_background(
          agent_id,
          text:,
          user_id: nil,
          room_id: nil,
          context: nil,
          on_disconnect: nil,
          on_conflict: nil,
          request_options: nil
        )
          body = {}
          body["text"] = text
          body["userId"] = user_id unless user_id.nil?
          body["roomId"] = room_id unless room_id.nil?
          body["context"] = context unless context.nil?
          body["onDisconnect"] = on_disconnect unless on_disconnect.nil?
          body["onConflict"] = on_conflict unless on_conflict.nil?
          body["background"] = true
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/messages",
            type: "BackgroundMessageAccepted",
            body: body,
            options: request_options
          )
        end

        # List an agent's messages.
        #
        # The agent's stored messages, both sides (a message before its reply), newest first unless
        # `order=asc`. Filters: `conversationId` (one conversation), or `userId` (that user's messages in
        # every room), `roomId` (every user's in that room), both (one conversation); none: every message of
        # the agent. `conversationId` with `userId` or `roomId` is refused with `400 INVALID_REQUEST`.
        # Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>` returns the items just older than that
        # one, `after=<id>` those just newer, presented in the list's order either way; the next page's cursor
        # is the last item's id (`before` it when newest first, `after` it when oldest first). A cursor that
        # is not an item of this list (unknown, or another agent's) is answered `400 INVALID_REQUEST`, as are
        # unknown or repeated parameters and values out of range.
        #
        # Requires the `history:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param conversation_id [String] Only the messages of this conversation (`conv_…`). Not with `userId`
        #   or `roomId`. An id that is not one of the agent's conversations is answered `404
        #   CONVERSATION_NOT_FOUND`.
        # @param user_id [String] Only the messages of this user id, in every room; with `roomId`, one
        #   conversation.
        # @param room_id [String] Only the messages in this room id, of every user; with `userId`, one
        #   conversation.
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only messages older than this one (its id): the page just below it. The next
        #   page of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only messages newer than this one (its id): the page just above it. The next
        #   page of an `asc` list is `after` its last item's id. Not with `before`.
        # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
        #   either way. Server default: `desc`. One of `asc`, `desc`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::HistoryMessage>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `CONVERSATION_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(
          agent_id,
          conversation_id: nil,
          user_id: nil,
          room_id: nil,
          limit: nil,
          before: nil,
          after: nil,
          order: nil,
          request_options: nil
        )
          query = {
            "conversationId" => conversation_id,
            "userId" => user_id,
            "roomId" => room_id,
            "limit" => limit,
            "before" => before,
            "after" => after,
            "order" => order
          }
          api_cursor_paginate(
            "/agents/#{path_segment(:agent_id, agent_id)}/messages",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "HistoryMessage", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Approve or refuse a message's tool calls.
        #
        # Answers tool calls a message paused before (its plugin item's `requireApproval`): with `approve:
        # true` they run; with `false` the model is told the person refused them (with `reason`). The calls
        # are the ones the server stored: an answer names them by id only. Once every pending call is decided
        # the message resumes in the background from its stored steps (tool rounds before the pause are not
        # run again) and is `pending`, then `completed` or `failed`, at `GET …/messages/{messageId}`; while
        # some are undecided it stays `requires_action`, listing those. Unanswered for `TOOL_APPROVAL_TIMEOUT`
        # (24 hours by default) it fails with `APPROVAL_EXPIRED`.
        #
        # Requires the `messages:send` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param message_id [String] The message's id (`msg_…`), as a list or the send call gave it. An id of
        #   another agent's or account's message, or not of that form, is answered `404 MESSAGE_NOT_FOUND`.
        # @param tool_call_ids [Array<String>] The pending calls this answer decides
        #   (`pendingToolCalls[].id`).
        # @param approve [Boolean] `true`: the calls run; `false`: the model is told the person refused them.
        # @param reason [String] Given to the model with a refusal.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::BackgroundMessage]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `MESSAGE_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`, `MESSAGE_NOT_AWAITING_APPROVAL`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def approve(agent_id, message_id, tool_call_ids:, approve:, reason: nil, request_options: nil)
          body = {}
          body["toolCallIds"] = tool_call_ids
          body["approve"] = approve
          body["reason"] = reason unless reason.nil?
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/messages/#{path_segment(:message_id, message_id)}/approve",
            type: "BackgroundMessage",
            body: body,
            options: request_options
          )
        end

        # Get a message.
        #
        # One stored message of the agent: a message sent to it, or its reply (whose id the send call answered
        # with). For a message sent with `background: true` (or paused for tool approval), a
        # `BackgroundMessage`: the reply object with `status` (`pending`, `requires_action`, `completed` or
        # `failed`). A completed one is answered so for as long as its reply is stored; a failed one for 24
        # hours after it ended (or `STREAM_RETENTION`, if longer), then `404 MESSAGE_NOT_FOUND`.
        #
        # Requires the `history:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
        #
        # An answer with `status` is a Models::BackgroundMessage: read it with `get_background`, or wait for
        # it with `wait_for_background`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param message_id [String] The message's id (`msg_…`), as a list or the send call gave it. An id of
        #   another agent's or account's message, or not of that form, is answered `404 MESSAGE_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::HistoryMessage]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `MESSAGE_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def get(agent_id, message_id, request_options: nil)
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/messages/#{path_segment(:message_id, message_id)}",
            type: "HistoryMessage",
            options: request_options
          )
        end

        # Get a message, as a Models::BackgroundMessage.
        #
        # Raises Agentry::Error when the answer is not one (it has no `status`): read that with `get`.
        #
        # One stored message of the agent: a message sent to it, or its reply (whose id the send call answered
        # with). For a message sent with `background: true` (or paused for tool approval), a
        # `BackgroundMessage`: the reply object with `status` (`pending`, `requires_action`, `completed` or
        # `failed`). A completed one is answered so for as long as its reply is stored; a failed one for 24
        # hours after it ended (or `STREAM_RETENTION`, if longer), then `404 MESSAGE_NOT_FOUND`.
        #
        # Requires the `history:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param message_id [String] The message's id (`msg_…`), as a list or the send call gave it. An id of
        #   another agent's or account's message, or not of that form, is answered `404 MESSAGE_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::BackgroundMessage]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `MESSAGE_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        # @raise [Agentry::Error] an answer of another type
        def get_background(agent_id, message_id, request_options: nil)
          api_variant_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/messages/#{path_segment(:message_id, message_id)}",
            type: "BackgroundMessage",
            marker: "status",
            main_method: "get",
            options: request_options
          )
        end

        # Waits until the Models::BackgroundMessage is no longer pending, and returns it: reads it with
        # `get_background` while `status` is "pending", pausing `poll_interval` seconds at first and twice as
        # long each time (at most 5 seconds). Each read is retried like any call.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param message_id [String] The message's id (`msg_…`), as a list or the send call gave it. An id of
        #   another agent's or account's message, or not of that form, is answered `404 MESSAGE_NOT_FOUND`.
        # @param poll_interval [Numeric] seconds before the first read again. Default 0.5.
        # @param max_wait [Numeric] seconds to wait in all before raising Agentry::APITimeoutError (the
        #   message goes on; read it again later). Default 600.
        # @param request_options [Hash, nil] each read's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::BackgroundMessage]
        # @raise [Agentry::APITimeoutError] still pending after `max_wait`
        def wait_for_background(
          agent_id,
          message_id,
          poll_interval: Agentry::Polling::DEFAULT_POLL_INTERVAL,
          max_wait: Agentry::Polling::DEFAULT_MAX_WAIT,
          request_options: nil
        )
          Agentry::Polling.until_done(
            pending: { status: "pending" },
            poll_interval: poll_interval,
            max_wait: max_wait
          ) do
            get_background(agent_id, message_id, request_options: request_options)
          end
        end
      end

      # Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`,
      # `history:delete`).
      class Conversations < Agentry::Resource
        # List an agent's conversations.
        #
        # The agent's conversations, newest activity first, optionally only those of one `userId` or one
        # `roomId` (both: the one conversation). Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>`
        # returns the items just older than that one, `after=<id>` those just newer, presented in the list's
        # order either way; the next page's cursor is the last item's id (`before` it when newest first,
        # `after` it when oldest first). A cursor that is not an item of this list (unknown, or another
        # agent's) is answered `400 INVALID_REQUEST`, as are unknown or repeated parameters and values out of
        # range.
        #
        # Requires the `history:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param user_id [String] Only the conversations of this user id (in every room).
        # @param room_id [String] Only the conversations in this room id (of every user).
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only conversations older than this one (its id): the page just below it. The
        #   next page of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only conversations newer than this one (its id): the page just above it. The
        #   next page of an `asc` list is `after` its last item's id. Not with `before`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::Conversation>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(
          agent_id,
          user_id: nil,
          room_id: nil,
          limit: nil,
          before: nil,
          after: nil,
          request_options: nil
        )
          query = {
            "userId" => user_id,
            "roomId" => room_id,
            "limit" => limit,
            "before" => before,
            "after" => after
          }
          api_cursor_paginate(
            "/agents/#{path_segment(:agent_id, agent_id)}/conversations",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: nil,
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "Conversation", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Delete a conversation.
        #
        # Deletes the conversation and all its messages, in one transaction: they are gone from every read and
        # from every later prompt (the next message with the same `userId` and `roomId` starts a new
        # conversation, with a new id). Deleting it again is answered `404 CONVERSATION_NOT_FOUND`.
        #
        # Requires the `history:delete` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param conversation_id [String] The conversation's id (`conv_…`). An id of another agent's or
        #   account's conversation, or not of that form, is answered `404 CONVERSATION_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::ConversationDeleted]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `CONVERSATION_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def delete(agent_id, conversation_id, request_options: nil)
          api_request(
            :delete,
            "/agents/#{path_segment(:agent_id, agent_id)}/conversations/#{path_segment(:conversation_id, conversation_id)}",
            type: "ConversationDeleted",
            options: request_options
          )
        end
      end

      # Talk to an agent, with or without streaming.
      class Runs < Agentry::Resource
        # List an agent's runs.
        #
        # The agent's runs (its streamed and background messages, while their records are kept: an hour after
        # they end by default, a failed background message a day at least), newest first unless `order=asc`;
        # `status` keeps only those of one status. Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>`
        # returns the items just older than that one, `after=<id>` those just newer, presented in the list's
        # order either way; the next page's cursor is the last item's id (`before` it when newest first,
        # `after` it when oldest first). A cursor that is not an item of this list (unknown, or another
        # agent's) is answered `400 INVALID_REQUEST`, as are unknown or repeated parameters and values out of
        # range.
        #
        # Requires the `history:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param status [String, Symbol] Only the runs of this status. One of `pending`, `requires_action`,
        #   `completed`, `failed`, `cancelled` (Models::BackgroundMessageStatus).
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only runs older than this one (its id): the page just below it. The next page
        #   of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only runs newer than this one (its id): the page just above it. The next page
        #   of an `asc` list is `after` its last item's id. Not with `before`.
        # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
        #   either way. Server default: `desc`. One of `asc`, `desc`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::AgentRunListResponseDataItem>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(agent_id, status: nil, limit: nil, before: nil, after: nil, order: nil, request_options: nil)
          query = {"status" => status, "limit" => limit, "before" => before, "after" => after, "order" => order}
          api_cursor_paginate(
            "/agents/#{path_segment(:agent_id, agent_id)}/runs",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "AgentRunListResponseDataItem", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Cancel every run of an agent.
        #
        # The kill switch: every pending run of the agent (streamed and background messages) ends `cancelled`,
        # nothing of it stored; its stream ends with an `error` event (`AGENT_UNAVAILABLE`). A message
        # generated by another process of the deployment, streamed or background, stops within a few seconds
        # (at that process's next lease renewal, `RUN_LEASE_RENEW_MS`). Answers how many runs were pending;
        # cancelling again answers 0.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::CancelAgentRunsResponseData]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def cancel(agent_id, request_options: nil)
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/runs/cancel",
            type: "CancelAgentRunsResponseData",
            options: request_options
          )
        end
      end

      # Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`,
      # `history:delete`).
      class Memories < Agentry::Resource
        # List an agent's memories.
        #
        # What the agent remembers of its users: facts it learnt after turns, or that were added by hand,
        # newest first unless `order=asc`. `userId`: only that user's; `q`: only those containing every word
        # of the text (full-text search). Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>` returns
        # the items just older than that one, `after=<id>` those just newer, presented in the list's order
        # either way; the next page's cursor is the last item's id (`before` it when newest first, `after` it
        # when oldest first). A cursor that is not an item of this list (unknown, or another agent's) is
        # answered `400 INVALID_REQUEST`, as are unknown or repeated parameters and values out of range.
        #
        # Requires the `history:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param user_id [String] Only the memories of this user id.
        # @param q [String] Only the memories that contain every word of this text (full-text search: case,
        #   punctuation and word endings do not matter), 1 to 500 characters.
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only memories older than this one (its id): the page just below it. The next
        #   page of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only memories newer than this one (its id): the page just above it. The next
        #   page of an `asc` list is `after` its last item's id. Not with `before`.
        # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
        #   either way. Server default: `desc`. One of `asc`, `desc`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::Memory>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(
          agent_id,
          user_id: nil,
          q: nil,
          limit: nil,
          before: nil,
          after: nil,
          order: nil,
          request_options: nil
        )
          query = {
            "userId" => user_id,
            "q" => q,
            "limit" => limit,
            "before" => before,
            "after" => after,
            "order" => order
          }
          api_cursor_paginate(
            "/agents/#{path_segment(:agent_id, agent_id)}/memories",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "Memory", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Add a memory.
        #
        # Adds a fact about a user by hand; it reaches that user's later prompts with this agent when
        # relevant. A fact the user already has (the same text, ignoring case, punctuation and spacing) is not
        # stored twice: the answer is the one stored. Beyond the agent's `settings.memoryLimit` per user (100
        # by default) the user's oldest memories are deleted.
        #
        # Requires the `history:delete` scope. Counts against `requestsPerMinute`, `createPerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param user_id [String] The user the memory is about, as messages name them.
        # @param text [String] The fact, 1 to 1000 characters once trimmed.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Memory]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def create(agent_id, user_id:, text:, request_options: nil)
          body = {}
          body["userId"] = user_id
          body["text"] = text
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/memories",
            type: "Memory",
            body: body,
            options: request_options
          )
        end

        # Delete a memory.
        #
        # Deletes one memory: it reaches no later prompt, and the same fact may be learnt again. Deleting it
        # again is answered `404 MEMORY_NOT_FOUND`.
        #
        # Requires the `history:delete` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param memory_id [String] The memory's id (`mem_…`). An id of another agent's or account's memory,
        #   or not of that form, is answered `404 MEMORY_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::MemoryDeletedResponseData]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `MEMORY_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def delete(agent_id, memory_id, request_options: nil)
          api_request(
            :delete,
            "/agents/#{path_segment(:agent_id, agent_id)}/memories/#{path_segment(:memory_id, memory_id)}",
            type: "MemoryDeletedResponseData",
            options: request_options
          )
        end
      end

      # Create, list, read, update and delete agents; import and export elizaOS character files.
      class Documents < Agentry::Resource
        # Upload a document.
        #
        # Adds a file the agent answers from: text/plain, text/markdown, text/html, application/pdf, at most
        # 10 MiB. Its text is extracted (HTML without markup, PDF page by page), cut into chunks of about
        # 1,200 characters that overlap by 200, and indexed for full-text search; each later message to the
        # agent carries the chunks that match it best, within `settings.knowledgeTokenBudget` (1000 estimated
        # tokens by default), and the reply lists them in `citations`. Send the file as `multipart/form-data`
        # (part `file`, and optionally `title` and `source`), or as JSON (`text`, or `contentBase64` with
        # `contentType`) within the 1 MiB of a JSON body. Another type is answered `415
        # UNSUPPORTED_MEDIA_TYPE` naming the supported ones; a larger file `413 PAYLOAD_TOO_LARGE`; a file
        # without text `400 INVALID_REQUEST`.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `createPerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param title [String] The document's title, 0 to 200 characters; empty or absent: the file's name,
        #   else the first line of its text.
        # @param content_type [String, Symbol] How to read the content; `text/plain` by default. One of
        #   `text/plain`, `text/markdown`, `text/html`, `application/pdf`.
        # @param text [String] The document's text (plain, Markdown or HTML, as `contentType` says). Give it
        #   or `contentBase64`.
        # @param content_base64 [String] The file's bytes in base64 (a PDF, for instance). Give it or `text`.
        # @param source [String] The knowledge reference of the agent's imported character this file answers
        #   (`personality.knowledgeSources`: a file's path, or a path inside a folder's), as `GET
        #   /v1/agents/{agentId}/knowledge-sources` lists them.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Document]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def create(
          agent_id,
          title: nil,
          content_type: nil,
          text: nil,
          content_base64: nil,
          source: nil,
          request_options: nil
        )
          body = {}
          body["title"] = title unless title.nil?
          body["contentType"] = content_type unless content_type.nil?
          body["text"] = text unless text.nil?
          body["contentBase64"] = content_base64 unless content_base64.nil?
          body["source"] = source unless source.nil?
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/documents",
            type: "Document",
            body: body,
            options: request_options
          )
        end

        # List an agent's documents.
        #
        # The files the agent answers from, newest first unless `order=asc`. Cursor-paged: `limit` 1 to 100
        # (default 20); `before=<id>` returns the items just older than that one, `after=<id>` those just
        # newer, presented in the list's order either way; the next page's cursor is the last item's id
        # (`before` it when newest first, `after` it when oldest first). A cursor that is not an item of this
        # list (unknown, or another agent's) is answered `400 INVALID_REQUEST`, as are unknown or repeated
        # parameters and values out of range.
        #
        # Requires the `agents:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only documents older than this one (its id): the page just below it. The next
        #   page of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only documents newer than this one (its id): the page just above it. The next
        #   page of an `asc` list is `after` its last item's id. Not with `before`.
        # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
        #   either way. Server default: `desc`. One of `asc`, `desc`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::Document>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(agent_id, limit: nil, before: nil, after: nil, order: nil, request_options: nil)
          query = {"limit" => limit, "before" => before, "after" => after, "order" => order}
          api_cursor_paginate(
            "/agents/#{path_segment(:agent_id, agent_id)}/documents",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "Document", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Get a document.
        #
        # One of the files the agent answers from.
        #
        # Requires the `agents:read` scope. Counts against `requestsPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param document_id [String] The document's id (`doc_…`). An id of another agent's or account's
        #   document, or not of that form, is answered `404 DOCUMENT_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::Document]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `DOCUMENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def get(agent_id, document_id, request_options: nil)
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/documents/#{path_segment(:document_id, document_id)}",
            type: "Document",
            options: request_options
          )
        end

        # Delete a document.
        #
        # Deletes a document and its chunks: no later message carries them. Replies already stored keep their
        # citations. Deleting it again is answered `404 DOCUMENT_NOT_FOUND`.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param document_id [String] The document's id (`doc_…`). An id of another agent's or account's
        #   document, or not of that form, is answered `404 DOCUMENT_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::DocumentDeletedResponseData]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `DOCUMENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def delete(agent_id, document_id, request_options: nil)
          api_request(
            :delete,
            "/agents/#{path_segment(:agent_id, agent_id)}/documents/#{path_segment(:document_id, document_id)}",
            type: "DocumentDeletedResponseData",
            options: request_options
          )
        end

        # List a character's knowledge files.
        #
        # The file and folder references of the agent's imported character (`knowledge` entries `{path}` and
        # `{directory}`, kept in `personality.knowledgeSources`), and which of them no document answers yet:
        # upload each file with its path as `source` (a folder's: a path inside it).
        #
        # Requires the `agents:read` scope. Counts against `requestsPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::KnowledgeSourcesResponseData]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def sources(agent_id, request_options: nil)
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/knowledge-sources",
            type: "KnowledgeSourcesResponseData",
            options: request_options
          )
        end
      end

      # Create, list, read, update and delete agents; import and export elizaOS character files.
      class Schedules < Agentry::Resource
        # Create a schedule.
        #
        # Sends `text` to the agent at each time of a cron expression in an IANA time zone, as one background
        # message per fire (its `context.schedule` is `{id, firedAt}`), run once across every process of the
        # deployment. Its reply is stored in the conversation of `userId` and `roomId` and reaches webhooks as
        # `message.completed` (or `message.failed`). A fire missed while the service was down runs once at
        # start if less than an hour late; later ones are skipped and counted in `skippedFires`. The answer
        # shows the next 5 fire times.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `createPerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param cron [String] A cron expression: 5 fields (minute hour day-of-month month day-of-week, e.g.
        #   `"0 9 * * 1-5"`: 09:00 on weekdays), or 6 with seconds first (`"*/30 * * * * *"`). Ranges, lists,
        #   steps, names (`MON`, `JAN`) and `L` are accepted. An expression that is not valid is answered 400
        #   naming `cron`.
        # @param timezone [String] The IANA time zone the expression is read in (`"Europe/Berlin"`,
        #   `"America/New_York"`, `"UTC"`); daylight saving time is followed. An unknown one is answered 400
        #   naming `timezone`.
        # @param text [String] The message each fire sends to the agent, 1 to 100000 characters.
        # @param user_id [String] The user id each fire's message gives (its conversation).
        # @param room_id [String] The room id each fire's message gives: a connector chat's room id
        #   (`telegram:<chat id>`) keeps the conversation with that chat.
        # @param enabled [Boolean] Whether it fires; `true` when left out.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Schedule]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def create(
          agent_id,
          cron:,
          timezone:,
          text:,
          user_id: nil,
          room_id: nil,
          enabled: nil,
          request_options: nil
        )
          body = {}
          body["cron"] = cron
          body["timezone"] = timezone
          body["text"] = text
          body["userId"] = user_id unless user_id.nil?
          body["roomId"] = room_id unless room_id.nil?
          body["enabled"] = enabled unless enabled.nil?
          api_request(
            :post,
            "/agents/#{path_segment(:agent_id, agent_id)}/schedules",
            type: "Schedule",
            body: body,
            options: request_options
          )
        end

        # List an agent's schedules.
        #
        # The agent's schedules, newest first unless `order=asc`, each with its next fire times and last fire.
        # Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>` returns the items just older than that
        # one, `after=<id>` those just newer, presented in the list's order either way; the next page's cursor
        # is the last item's id (`before` it when newest first, `after` it when oldest first). A cursor that
        # is not an item of this list (unknown, or another agent's) is answered `400 INVALID_REQUEST`, as are
        # unknown or repeated parameters and values out of range.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only schedules older than this one (its id): the page just below it. The next
        #   page of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only schedules newer than this one (its id): the page just above it. The next
        #   page of an `asc` list is `after` its last item's id. Not with `before`.
        # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
        #   either way. Server default: `desc`. One of `asc`, `desc`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::Schedule>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(agent_id, limit: nil, before: nil, after: nil, order: nil, request_options: nil)
          query = {"limit" => limit, "before" => before, "after" => after, "order" => order}
          api_cursor_paginate(
            "/agents/#{path_segment(:agent_id, agent_id)}/schedules",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "Schedule", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Get a schedule.
        #
        # One schedule: its next 5 fire times, how many fires were skipped, and its last fire with the status
        # of the message it sent.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `getPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param schedule_id [String] The schedule's id (`sch_…`). An id of another agent's or account's
        #   schedule, or not of that form, is answered `404 SCHEDULE_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::Schedule]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `SCHEDULE_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def get(agent_id, schedule_id, request_options: nil)
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/schedules/#{path_segment(:schedule_id, schedule_id)}",
            type: "Schedule",
            options: request_options
          )
        end

        # Update a schedule.
        #
        # Changes the fields given. A new `cron` or `timezone`, or `enabled: true` again, counts from now:
        # fires missed while it was disabled are not run. `enabled: false` stops its fires.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param schedule_id [String] The schedule's id (`sch_…`). An id of another agent's or account's
        #   schedule, or not of that form, is answered `404 SCHEDULE_NOT_FOUND`.
        # @param cron [String] A cron expression: 5 fields (minute hour day-of-month month day-of-week, e.g.
        #   `"0 9 * * 1-5"`: 09:00 on weekdays), or 6 with seconds first (`"*/30 * * * * *"`). Ranges, lists,
        #   steps, names (`MON`, `JAN`) and `L` are accepted. An expression that is not valid is answered 400
        #   naming `cron`.
        # @param timezone [String] The IANA time zone the expression is read in (`"Europe/Berlin"`,
        #   `"America/New_York"`, `"UTC"`); daylight saving time is followed. An unknown one is answered 400
        #   naming `timezone`.
        # @param text [String] The message each fire sends to the agent, 1 to 100000 characters.
        # @param user_id [String, nil] `nil` sends `null`; leave it out to keep the current value.
        # @param room_id [String, nil] `nil` sends `null`; leave it out to keep the current value.
        # @param enabled [Boolean] `false` stops its fires; `true` starts them again from the next fire time
        #   after now.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Schedule]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `SCHEDULE_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def update(
          agent_id,
          schedule_id,
          cron: nil,
          timezone: nil,
          text: nil,
          user_id: Agentry::OMIT,
          room_id: Agentry::OMIT,
          enabled: nil,
          request_options: nil
        )
          body = {}
          body["cron"] = cron unless cron.nil?
          body["timezone"] = timezone unless timezone.nil?
          body["text"] = text unless text.nil?
          body["userId"] = user_id unless user_id.equal?(Agentry::OMIT)
          body["roomId"] = room_id unless room_id.equal?(Agentry::OMIT)
          body["enabled"] = enabled unless enabled.nil?
          api_request(
            :patch,
            "/agents/#{path_segment(:agent_id, agent_id)}/schedules/#{path_segment(:schedule_id, schedule_id)}",
            type: "Schedule",
            body: body,
            options: request_options
          )
        end

        # Delete a schedule.
        #
        # Deletes a schedule: it fires no more (a message it already sent runs to its end). Deleting it again
        # is answered `404 SCHEDULE_NOT_FOUND`. Deleting the agent deletes its schedules.
        #
        # Requires the `agents:write` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param schedule_id [String] The schedule's id (`sch_…`). An id of another agent's or account's
        #   schedule, or not of that form, is answered `404 SCHEDULE_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::ScheduleDeletedResponseData]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `SCHEDULE_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def delete(agent_id, schedule_id, request_options: nil)
          api_request(
            :delete,
            "/agents/#{path_segment(:agent_id, agent_id)}/schedules/#{path_segment(:schedule_id, schedule_id)}",
            type: "ScheduleDeletedResponseData",
            options: request_options
          )
        end
      end

      # Sends, tokens, errors and latency by hour or day, grouped as asked (scope `usage:read`).
      class Usage < Agentry::Resource
        # Get an agent's usage.
        #
        # The usage of one agent, as `GET /v1/usage` answers it with `agentId` fixed (so grouping by `agentId`
        # gives one group).
        #
        # Requires the `usage:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param from [Time, String] The start of the range, inclusive, rounded down to the granularity.
        #   Default: `to` less 7 days.
        # @param to [Time, String] The end of the range, exclusive, rounded up to the granularity; it may lie
        #   in the future. Default: now.
        # @param granularity [String, Symbol] The width of the buckets, in UTC. A range may cover at most 31
        #   days of hours or 400 days of days. Server default: `day`. One of `hour`, `day`.
        # @param user_id [String] Only the messages of this user id.
        # @param group_by [Array<String, Symbol>] What each bucket's groups are: any of `agentId`, `userId`,
        #   `model`, `apiKeyId`, comma-separated. Unset: one group per bucket. One of `agentId`, `userId`,
        #   `model`, `apiKeyId`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Models::UsageReport]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def get(
          agent_id,
          from: nil,
          to: nil,
          granularity: nil,
          user_id: nil,
          group_by: nil,
          request_options: nil
        )
          query = {
            "from" => from,
            "to" => to,
            "granularity" => granularity,
            "userId" => user_id,
            "groupBy" => group_by
          }
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/usage",
            type: "UsageReport",
            query: query,
            options: request_options
          )
        end
      end

      # The plugin catalogue (any key) and agents' secrets, which plugins read (scope `plugins:manage`).
      class Secrets < Agentry::Resource
        # Set an agent's secret.
        #
        # Sets one secret of the agent, replacing its value if it exists: a credential its plugins read (the
        # `mcp` plugin's `authSecret`, for example). The value is stored encrypted (AES-256-GCM under the
        # deployment's `SECRETS_KEY`) and is never returned, logged or exported; the answer names the secret
        # and when it was set. Deleting the agent deletes its secrets.
        #
        # Requires the `plugins:manage` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param name [String] The secret's name: 1 to 64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-`
        #   (otherwise `400 INVALID_REQUEST`).
        # @param value [String] The secret's value, 1 to 4096 characters. Stored encrypted; never returned,
        #   logged or exported.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Secret]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
        # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def set(agent_id, name, value:, request_options: nil)
          body = {}
          body["value"] = value
          api_request(
            :put,
            "/agents/#{path_segment(:agent_id, agent_id)}/secrets/#{path_segment(:name, name)}",
            type: "Secret",
            body: body,
            options: request_options
          )
        end

        # Delete an agent's secret.
        #
        # Deletes one secret of the agent; a plugin that reads it then runs without it.
        #
        # Requires the `plugins:manage` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param name [String] The secret's name: 1 to 64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-`
        #   (otherwise `400 INVALID_REQUEST`).
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::SecretDeletedResponseData]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `SECRET_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def delete(agent_id, name, request_options: nil)
          api_request(
            :delete,
            "/agents/#{path_segment(:agent_id, agent_id)}/secrets/#{path_segment(:name, name)}",
            type: "SecretDeletedResponseData",
            options: request_options
          )
        end

        # List an agent's secrets.
        #
        # The names of the agent's secrets and when each was set, sorted by name; never their values.
        #
        # Requires the `plugins:manage` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Array<Models::Secret>]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(agent_id, request_options: nil)
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/secrets",
            type: [:array, "Secret"],
            options: request_options
          )
        end
      end

      # Create, list, read, update and delete agents; import and export elizaOS character files.
      class Clients < Agentry::Resource
        # List an agent's platform clients.
        #
        # Each platform the agent's `clients` names, in order, and how its connector stands: `connected`
        # (polling or holding the platform session), `connecting` (starting, or waiting for another process's
        # lease on the bot token), `stopped` (the agent is not active or lacks the platform's secrets, e.g.
        # `TELEGRAM_BOT_TOKEN`), `failed` (the platform rejected the token: the agent is `error` with
        # `CLIENT_AUTH_FAILED` until a PATCH or a new secret) or `inert` (a platform the service does not
        # run).
        #
        # Requires the `agents:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param agent_id [String] The agent's id (`agt_…`). An id of another account's agent, or not of that
        #   form, is answered `404 AGENT_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Array<Models::ClientStatus>]
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(agent_id, request_options: nil)
          api_request(
            :get,
            "/agents/#{path_segment(:agent_id, agent_id)}/clients",
            type: [:array, "ClientStatus"],
            options: request_options
          )
        end
      end
    end

    # Read and delete stored conversations and messages; export and erase a user's (scopes `history:read`,
    # `history:delete`).
    class Users < Agentry::Resource
      # Export a user's messages.
      #
      # Every message the user exchanged with any agent of the account, oldest first, as NDJSON
      # (`application/x-ndjson`): one `HistoryMessage` per line, each with its `agentId`, each line ending
      # in `\n`. The response is streamed as it is read, a page at a time, so its size is not limited; a
      # user with no messages is answered `200` with an empty body. Messages of an agent that no longer
      # exists are left out. After the messages come the user's memories (docs/api/memories.md), one
      # `Memory` per line, told apart by their `mem_` ids (each line is a `UserExportLine`). A failure after
      # the first line cuts the response short (it ends without its last chunk), which HTTP clients report
      # as an incomplete body: retry the export.
      #
      # Requires the `history:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Without a block, returns an Agentry::NDJSONStream, read line by line when you iterate it. With a
      # block, reads it at once, yielding each item. Leaving the loop early closes the connection. Once
      # started, the answer is never retried: one cut short raises Agentry::APIConnectionError after the
      # items that arrived whole.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param user_id [String] The user id, as messages were sent with it, URL-encoded: 1 to 256
      #   characters, no U+0000 (otherwise `400 INVALID_REQUEST`).
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @yieldparam item [Models::HistoryMessage, Models::Memory] each item, in order
      # @return [Agentry::NDJSONStream<Models::HistoryMessage, Models::Memory>]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def export(user_id, request_options: nil, &block)
        api_lines(
          :get,
          "/users/#{path_segment(:user_id, user_id)}/export",
          type: [:keyed, ["conversationId", "HistoryMessage"], ["source", "Memory"]],
          options: request_options,
          &block
        )
      end

      # Erase a user.
      #
      # Erases the user's conversations and messages in every agent of the account, in one transaction, and
      # removes the user id from the usage records, whose counts stay, unattributed; then the user's
      # `message.completed` webhook events and their delivery log. Nothing of them can be read afterwards,
      # nor reaches a later prompt. Idempotent: erasing again, or a user with no messages, answers the same
      # with `messagesDeleted: 0`.
      #
      # Requires the `history:delete` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param user_id [String] The user id, as messages were sent with it, URL-encoded: 1 to 256
      #   characters, no U+0000 (otherwise `400 INVALID_REQUEST`).
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::UserErased]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def erase(user_id, request_options: nil)
        api_request(
          :delete,
          "/users/#{path_segment(:user_id, user_id)}",
          type: "UserErased",
          options: request_options
        )
      end
    end

    # Sends, tokens, errors and latency by hour or day, grouped as asked (scope `usage:read`).
    class Usage < Agentry::Resource
      # Get the account's usage.
      #
      # The account's sends, tokens, errors, latency and time to first token, by hour or by day (UTC), from
      # rollups recorded with each send. Every bucket of the range is present, zero-filled. `groupBy` splits
      # each bucket (and the totals) by agent, user, model or API key; `agentId` and `userId` filter. A
      # range longer than 31 days of hours or 400 days of days, or one that ends before it starts, is
      # refused with `400 INVALID_REQUEST`. A deleted agent's usage goes with it; an erased user's stays,
      # with no user id.
      #
      # Requires the `usage:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param from [Time, String] The start of the range, inclusive, rounded down to the granularity.
      #   Default: `to` less 7 days.
      # @param to [Time, String] The end of the range, exclusive, rounded up to the granularity; it may lie
      #   in the future. Default: now.
      # @param granularity [String, Symbol] The width of the buckets, in UTC. A range may cover at most 31
      #   days of hours or 400 days of days. Server default: `day`. One of `hour`, `day`.
      # @param user_id [String] Only the messages of this user id.
      # @param group_by [Array<String, Symbol>] What each bucket's groups are: any of `agentId`, `userId`,
      #   `model`, `apiKeyId`, comma-separated. Unset: one group per bucket. One of `agentId`, `userId`,
      #   `model`, `apiKeyId`.
      # @param agent_id [String] Only the messages to this agent.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Models::UsageReport]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def get(
        from: nil,
        to: nil,
        granularity: nil,
        user_id: nil,
        group_by: nil,
        agent_id: nil,
        request_options: nil
      )
        query = {
          "from" => from,
          "to" => to,
          "granularity" => granularity,
          "userId" => user_id,
          "groupBy" => group_by,
          "agentId" => agent_id
        }
        api_request(:get, "/usage", type: "UsageReport", query: query, options: request_options)
      end
    end

    # Endpoints that receive the account's events, signed per Standard Webhooks; their secrets and
    # delivery logs (scope `webhooks:manage`).
    class WebhookEndpoints < Agentry::Resource
      # Endpoints that receive the account's events, signed per Standard Webhooks; their secrets and
      # delivery logs (scope `webhooks:manage`).
      # @return [WebhookEndpoints::Deliveries]
      def deliveries
        @deliveries ||= Deliveries.new(@transport)
      end

      # Create a webhook endpoint.
      #
      # Registers a URL to receive the account's events, signed per Standard Webhooks (`webhook-id`,
      # `webhook-timestamp`, `webhook-signature` headers; an HMAC-SHA256 with the endpoint's secret). The
      # answer carries the secret (`whsec_…`), the only time it is shown: store it to verify deliveries. The
      # URL is checked and its host resolved before anything is stored (see `url`). An account holds at most
      # 20 endpoints; one more is `403 INSUFFICIENT_QUOTA`.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `createPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param url [String] Where deliveries are POSTed: an `https` URL of at most 2048 characters, without
      #   credentials, whose host resolves only to public addresses (no loopback, private, link-local, CGNAT,
      #   unique-local or cloud metadata address), which is checked now and again at each delivery; otherwise
      #   `400 INVALID_REQUEST` naming `url`. A deployment run with `ALLOW_PRIVATE_NETWORKS=true` (development
      #   and tests only) also takes `http` and private addresses. Redirects are not followed.
      # @param events [Array<String, Symbol>] The event types delivered to the endpoint, each at most once,
      #   or `["*"]` alone for every type (those added later included). `webhook.test` events are sent on
      #   request whatever it lists. One of `*`, `agent.created`, `agent.updated`, `agent.status_changed`,
      #   `agent.deleted`, `message.completed`, `message.failed`, `message.requires_action`,
      #   `budget.threshold`.
      # @param description [String] Free text for you, at most 1000 characters, kept as sent; unset: empty.
      # @param enabled [Boolean] Whether events are delivered to it; unset: `true`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::WebhookCreated]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`, `INSUFFICIENT_QUOTA`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def create(url:, events:, description: nil, enabled: nil, request_options: nil)
        body = {}
        body["url"] = url
        body["events"] = events
        body["description"] = description unless description.nil?
        body["enabled"] = enabled unless enabled.nil?
        api_request(:post, "/webhooks", type: "WebhookCreated", body: body, options: request_options)
      end

      # List webhook endpoints.
      #
      # Every endpoint of the account (at most 20), newest first, without their secrets.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Array<Models::Webhook>]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(request_options: nil)
        api_request(:get, "/webhooks", type: [:array, "Webhook"], options: request_options)
      end

      # Get a webhook endpoint.
      #
      # One endpoint, without its secret.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `getPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
      #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Models::Webhook]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def get(webhook_id, request_options: nil)
        api_request(
          :get,
          "/webhooks/#{path_segment(:webhook_id, webhook_id)}",
          type: "Webhook",
          options: request_options
        )
      end

      # Update a webhook endpoint.
      #
      # Changes only the fields supplied. A new `url` is checked as on create. `enabled: false` stops
      # deliveries (pending attempts fail, nothing stale arrives later); `enabled: true` resumes them and
      # clears `disabledReason`.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
      #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
      # @param url [String] Where deliveries are POSTed: an `https` URL of at most 2048 characters, without
      #   credentials, whose host resolves only to public addresses (no loopback, private, link-local, CGNAT,
      #   unique-local or cloud metadata address), which is checked now and again at each delivery; otherwise
      #   `400 INVALID_REQUEST` naming `url`. A deployment run with `ALLOW_PRIVATE_NETWORKS=true` (development
      #   and tests only) also takes `http` and private addresses. Redirects are not followed.
      # @param events [Array<String, Symbol>] The event types delivered to the endpoint, each at most once,
      #   or `["*"]` alone for every type (those added later included). `webhook.test` events are sent on
      #   request whatever it lists. One of `*`, `agent.created`, `agent.updated`, `agent.status_changed`,
      #   `agent.deleted`, `message.completed`, `message.failed`, `message.requires_action`,
      #   `budget.threshold`.
      # @param description [String] Free text for you, at most 1000 characters, kept as sent.
      # @param enabled [Boolean] `false` stops deliveries: its pending attempts fail and nothing more is
      #   sent until it is `true` again, which also clears `disabledReason`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Webhook]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def update(webhook_id, url: nil, events: nil, description: nil, enabled: nil, request_options: nil)
        body = {}
        body["url"] = url unless url.nil?
        body["events"] = events unless events.nil?
        body["description"] = description unless description.nil?
        body["enabled"] = enabled unless enabled.nil?
        api_request(
          :patch,
          "/webhooks/#{path_segment(:webhook_id, webhook_id)}",
          type: "Webhook",
          body: body,
          options: request_options
        )
      end

      # Delete a webhook endpoint.
      #
      # Deletes the endpoint and its delivery log; nothing more is sent to it.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
      #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::WebhookDeleted]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def delete(webhook_id, request_options: nil)
        api_request(
          :delete,
          "/webhooks/#{path_segment(:webhook_id, webhook_id)}",
          type: "WebhookDeleted",
          options: request_options
        )
      end

      # Rotate a webhook endpoint's secret.
      #
      # Gives the endpoint a new secret, shown this once. For 24 hours deliveries carry a signature by the
      # previous secret as well (the `webhook-signature` header then holds two), so a receiver can switch
      # without losing any; a second rotation within those hours retires the first secret at once. Not
      # retried by the SDKs: each call makes a new secret.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
      #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::WebhookCreated]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def rotate_secret(webhook_id, request_options: nil)
        api_request(
          :post,
          "/webhooks/#{path_segment(:webhook_id, webhook_id)}/rotate-secret",
          type: "WebhookCreated",
          options: request_options
        )
      end

      # Send a test event.
      #
      # Sends a `webhook.test` event (`data`: `{webhookId, message}`) to this endpoint alone, whatever
      # events it subscribes to, signed and retried like any other. An endpoint that is disabled (`enabled:
      # false`, by you or by the service) is sent nothing: the request is refused with `400 INVALID_REQUEST`
      # naming `enabled`.
      #
      # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `createPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
      #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Delivery]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def send_test_event(webhook_id, request_options: nil)
        api_request(
          :post,
          "/webhooks/#{path_segment(:webhook_id, webhook_id)}/test",
          type: "Delivery",
          options: request_options
        )
      end

      # Endpoints that receive the account's events, signed per Standard Webhooks; their secrets and
      # delivery logs (scope `webhooks:manage`).
      class Deliveries < Agentry::Resource
        # List an endpoint's deliveries.
        #
        # The endpoint's delivery log, one entry per attempt (a retry or a redelivery is an entry of its own,
        # with the same `eventId`), newest first unless `order=asc`. What the endpoint answered is never shown
        # beyond its status. Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>` returns the items just
        # older than that one, `after=<id>` those just newer, presented in the list's order either way; the
        # next page's cursor is the last item's id (`before` it when newest first, `after` it when oldest
        # first). A cursor that is not an item of this list (unknown, or another endpoint's) is answered `400
        # INVALID_REQUEST`, as are unknown or repeated parameters and values out of range.
        #
        # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `listPerMinute`.
        #
        # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
        # again has the same effect.
        #
        # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
        #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
        # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
        # @param before [String] Only deliveries older than this one (its id): the page just below it. The
        #   next page of a `desc` list is `before` its last item's id. Not with `after`.
        # @param after [String] Only deliveries newer than this one (its id): the page just above it. The next
        #   page of an `asc` list is `after` its last item's id. Not with `before`.
        # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
        #   either way. Server default: `desc`. One of `asc`, `desc`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
        #   `headers:`.
        # @return [Agentry::CursorPage<Models::Delivery>] the first page asked for; enumerating it walks every page
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def list(webhook_id, limit: nil, before: nil, after: nil, order: nil, request_options: nil)
          query = {"limit" => limit, "before" => before, "after" => after, "order" => order}
          api_cursor_paginate(
            "/webhooks/#{path_segment(:webhook_id, webhook_id)}/deliveries",
            query: query,
            pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                          items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                          item_type: "Delivery", info_type: "CursorPagination" },
            options: request_options
          )
        end

        # Redeliver an event.
        #
        # Schedules a new attempt, due now, of the event of one of the endpoint's deliveries: a new delivery
        # id, the same event and `webhook-id`, so a receiver that has it already can tell. It is attempted
        # once; a failure is not retried. An endpoint that is disabled (`enabled: false`, by you or by the
        # service) is sent nothing: the request is refused with `400 INVALID_REQUEST` naming `enabled`.
        #
        # Requires the `webhooks:manage` scope. Counts against `requestsPerMinute`, `createPerMinute`.
        #
        # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
        # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
        # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
        # that answer, and the request runs once.
        #
        # @param webhook_id [String] The webhook endpoint's id (`whk_…`). An id of another account's endpoint,
        #   or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.
        # @param delivery_id [String] A delivery's id (`dlv_…`), as the endpoint's delivery log lists it. An
        #   id of another endpoint's delivery, or not of that form, is answered `404 DELIVERY_NOT_FOUND`.
        # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
        #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
        #   new random one.
        # @return [Models::Delivery]
        # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
        # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
        # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
        # @raise [Agentry::NotFoundError] 404 `WEBHOOK_NOT_FOUND`, `DELIVERY_NOT_FOUND`
        # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
        # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
        # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
        # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
        # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
        def redeliver(webhook_id, delivery_id, request_options: nil)
          api_request(
            :post,
            "/webhooks/#{path_segment(:webhook_id, webhook_id)}/deliveries/#{path_segment(:delivery_id, delivery_id)}/redeliver",
            type: "Delivery",
            options: request_options
          )
        end
      end
    end

    # The plugin catalogue (any key) and agents' secrets, which plugins read (scope `plugins:manage`).
    class Plugins < Agentry::Resource
      # List the plugin catalogue.
      #
      # The plugins this deployment installs, sorted by name: each with its version, the JSON Schema of the
      # `config` an agent gives it, the names of the secrets it reads and its tools. An agent uses a plugin
      # by naming it in `plugins`; during a turn the model may call the tools of the agent's enabled
      # plugins.
      #
      # Any valid API key, whatever its scopes. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Array<Models::Plugin>]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(request_options: nil)
        api_request(:get, "/plugins", type: [:array, "Plugin"], options: request_options)
      end
    end

    # Manage the account's API keys (scope `keys:manage`).
    class ApiKeys < Agentry::Resource
      # Create an API key.
      #
      # Creates a key in the caller's account and returns its secret, the only time it is shown. A key can
      # grant only scopes the calling key holds; from the console, only scopes the member's role holds
      # (docs/api/members.md). The key records the member who created it (`createdBy`). Without `scopes`, a
      # full-access calling key makes a full-access key (`fullAccess: true`: every scope, including scopes
      # added in later versions) and any other key makes one with exactly its own scopes.
      #
      # Requires the `keys:manage` scope. Counts against `requestsPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param name [String] A label for the key: at most 200 characters once trimmed, stored trimmed.
      # @param scopes [Array<String, Symbol>] The scopes to grant, each at most once; the calling key must
      #   hold them. Unset: what the calling key holds. A full-access key makes a full-access key (every
      #   scope, including scopes added in later versions); any other key makes one with exactly its own
      #   scopes. One of `agents:read`, `agents:write`, `agents:delete`, `messages:send`, `keys:manage`,
      #   `history:read`, `history:delete`, `usage:read`, `webhooks:manage`, `plugins:manage`, `members:read`,
      #   `members:write`, `budgets:read`, `budgets:write`, `audit:read` (Models::Scope).
      # @param expires_at [Time, String] When the key stops working: a date-time with a time zone, which
      #   must be in the future (an earlier one is refused with `400 INVALID_REQUEST`). Unset: never.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::ApiKeyCreated]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def create(name: nil, scopes: nil, expires_at: nil, request_options: nil)
        body = {}
        body["name"] = name unless name.nil?
        body["scopes"] = scopes unless scopes.nil?
        body["expiresAt"] = expires_at unless expires_at.nil?
        api_request(:post, "/api-keys", type: "ApiKeyCreated", body: body, options: request_options)
      end

      # List API keys.
      #
      # Lists the account's keys that are not revoked, without their secrets.
      #
      # Requires the `keys:manage` scope. Counts against `requestsPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Array<Models::ApiKey>]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(request_options: nil)
        api_request(:get, "/api-keys", type: [:array, "ApiKey"], options: request_options)
      end

      # Revoke an API key.
      #
      # Revokes a key of the caller's account. The key stops working at once on the gateway that answers,
      # and on the others within their key cache time (`AUTH_CACHE_TTL_MS`, under a second by default). A
      # key may revoke itself.
      #
      # Requires the `keys:manage` scope. Counts against `requestsPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param key_id [String] The API key's id (`key_…`). Another account's key, or a revoked one, is
      #   answered `404 NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::ApiKeyRevoked]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def revoke(key_id, request_options: nil)
        api_request(
          :delete,
          "/api-keys/#{path_segment(:key_id, key_id)}",
          type: "ApiKeyRevoked",
          options: request_options
        )
      end
    end

    # The people of the account and their roles, which decide what their console sessions may do (scopes
    # `members:read`, `members:write`).
    class Members < Agentry::Resource
      # Invite a member.
      #
      # Adds a person to the account with a role. They sign in to the console by OIDC with this email (or
      # with a sign-in link made for them by `agentry console link --member`), and act with the scopes of
      # their role. Only an owner may add an owner.
      #
      # Requires the `members:write` scope. Counts against `requestsPerMinute`, `createPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param email [String] The member's email, compared in lowercase; unique within the account.
      # @param name [String] The member's name; the part of the email before `@` when absent.
      # @param role [String, Symbol] `owner`: every scope; `admin`: a developer's plus keys and members;
      #   `developer`: reads plus agents, messages, history, webhooks and plugins; `viewer`: reads only
      #   (docs/api/members.md, "Roles"). One of `owner`, `admin`, `developer`, `viewer` (Models::Role).
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Member]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`, `MEMBER_EXISTS`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def invite(email:, name: nil, role:, request_options: nil)
        body = {}
        body["email"] = email
        body["name"] = name unless name.nil?
        body["role"] = role
        api_request(:post, "/members", type: "Member", body: body, options: request_options)
      end

      # List members.
      #
      # The account's members, newest first unless `order=asc`. Cursor-paged: `limit` 1 to 100 (default 20);
      # `before=<id>` returns the items just older than that one, `after=<id>` those just newer, presented
      # in the list's order either way; the next page's cursor is the last item's id (`before` it when
      # newest first, `after` it when oldest first). A cursor that is not an item of this list (unknown, or
      # another agent's) is answered `400 INVALID_REQUEST`, as are unknown or repeated parameters and values
      # out of range.
      #
      # Requires the `members:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
      # @param before [String] Only members older than this one (its id): the page just below it. The next
      #   page of a `desc` list is `before` its last item's id. Not with `after`.
      # @param after [String] Only members newer than this one (its id): the page just above it. The next
      #   page of an `asc` list is `after` its last item's id. Not with `before`.
      # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
      #   either way. Server default: `desc`. One of `asc`, `desc`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Agentry::CursorPage<Models::Member>] the first page asked for; enumerating it walks every page
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(limit: nil, before: nil, after: nil, order: nil, request_options: nil)
        query = {"limit" => limit, "before" => before, "after" => after, "order" => order}
        api_cursor_paginate(
          "/members",
          query: query,
          pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                        items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                        item_type: "Member", info_type: "CursorPagination" },
          options: request_options
        )
      end

      # Get a member.
      #
      # One member of the account.
      #
      # Requires the `members:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param member_id [String] The member's id (`usr_…`). An id of another account's member, or not of
      #   that form, is answered `404 MEMBER_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Models::Member]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `MEMBER_NOT_FOUND`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def get(member_id, request_options: nil)
        api_request(
          :get,
          "/members/#{path_segment(:member_id, member_id)}",
          type: "Member",
          options: request_options
        )
      end

      # Change a member.
      #
      # Changes a member's role, name or email; only the fields sent change. A new role takes effect on the
      # member's console sessions within a second. Only an owner may make or unmake an owner, and the
      # account's last owner cannot become anything else (`409 LAST_OWNER`).
      #
      # Requires the `members:write` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param member_id [String] The member's id (`usr_…`). An id of another account's member, or not of
      #   that form, is answered `404 MEMBER_NOT_FOUND`.
      # @param email [String] The member's email, compared in lowercase; unique within the account.
      # @param name [String] The member's name, 1 to 100 characters once trimmed.
      # @param role [String, Symbol] `owner`: every scope; `admin`: a developer's plus keys and members;
      #   `developer`: reads plus agents, messages, history, webhooks and plugins; `viewer`: reads only
      #   (docs/api/members.md, "Roles"). One of `owner`, `admin`, `developer`, `viewer` (Models::Role).
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Member]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `MEMBER_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`, `MEMBER_EXISTS`, `LAST_OWNER`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def update(member_id, email: nil, name: nil, role: nil, request_options: nil)
        body = {}
        body["email"] = email unless email.nil?
        body["name"] = name unless name.nil?
        body["role"] = role unless role.nil?
        api_request(
          :patch,
          "/members/#{path_segment(:member_id, member_id)}",
          type: "Member",
          body: body,
          options: request_options
        )
      end

      # Remove a member.
      #
      # Removes a member from the account and ends their console sessions at once. The keys they created
      # stay, and still name them in `createdBy`. Only an owner may remove an owner, and the account's last
      # owner cannot be removed (`409 LAST_OWNER`).
      #
      # Requires the `members:write` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param member_id [String] The member's id (`usr_…`). An id of another account's member, or not of
      #   that form, is answered `404 MEMBER_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::MemberRemovedResponseData]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `MEMBER_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`, `LAST_OWNER`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def remove(member_id, request_options: nil)
        api_request(
          :delete,
          "/members/#{path_segment(:member_id, member_id)}",
          type: "MemberRemovedResponseData",
          options: request_options
        )
      end
    end

    # Spend limits in tokens or US dollars per day or month for the account, an agent or a key (scopes
    # `budgets:read`, `budgets:write`).
    class Budgets < Agentry::Resource
      # Create a budget.
      #
      # Limits what the account, one of its agents (`agentId`) or one of its keys (`apiKeyId`) spends per
      # UTC day or month, in tokens or in US dollars at the configured prices. From then on a message it
      # counts is refused with `402 BUDGET_EXCEEDED` before it reaches a model when the budget cannot take
      # it; `budget.threshold` webhook events tell when its spend reaches 50, 80 and 100 %. Spend already
      # recorded this period counts. At most 100 budgets per account.
      #
      # Requires the `budgets:write` scope. Counts against `requestsPerMinute`, `createPerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param unit [String, Symbol] `tokens`: input and output tokens; `usd`: what they cost at the
      #   configured prices per model. One of `tokens`, `usd`.
      # @param limit [Numeric] In the budget's unit: a whole number of tokens (1 to 1,000,000,000,000), or
      #   US dollars (0.01 to 10,000,000, to the billionth).
      # @param period [String, Symbol] How often the budget starts again: every UTC day, or on the first of
      #   every UTC month. One of `day`, `month`.
      # @param agent_id [String] Only this agent's messages count. Unset (and no `apiKeyId`): the whole
      #   account's.
      # @param api_key_id [String] Only the messages sent with this key count. Not with `agentId`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Budget]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`, `INSUFFICIENT_QUOTA`
      # @raise [Agentry::NotFoundError] 404 `AGENT_NOT_FOUND`, `API_KEY_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def create(unit:, limit:, period:, agent_id: nil, api_key_id: nil, request_options: nil)
        body = {}
        body["unit"] = unit
        body["limit"] = limit
        body["period"] = period
        body["agentId"] = agent_id unless agent_id.nil?
        body["apiKeyId"] = api_key_id unless api_key_id.nil?
        api_request(:post, "/budgets", type: "Budget", body: body, options: request_options)
      end

      # List budgets.
      #
      # Every budget of the account (at most 100), oldest first, each with its spend this period.
      #
      # Requires the `budgets:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Array<Models::Budget>]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(request_options: nil)
        api_request(:get, "/budgets", type: [:array, "Budget"], options: request_options)
      end

      # Get a budget.
      #
      # One budget, with its spend this period and when it resets.
      #
      # Requires the `budgets:read` scope. Counts against `requestsPerMinute`, `getPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param budget_id [String] The budget's id (`bdg_…`). An id of another account's budget, or not of
      #   that form, is answered `404 BUDGET_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Models::Budget]
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `BUDGET_NOT_FOUND`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def get(budget_id, request_options: nil)
        api_request(
          :get,
          "/budgets/#{path_segment(:budget_id, budget_id)}",
          type: "Budget",
          options: request_options
        )
      end

      # Update a budget.
      #
      # Changes its `limit` (in its unit) or its `period`; what it counts and its unit stay. The new limit
      # applies to the next message; spend this period is kept (a new period starts from what was spent in
      # it).
      #
      # Requires the `budgets:write` scope. Counts against `requestsPerMinute`, `updatePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param budget_id [String] The budget's id (`bdg_…`). An id of another account's budget, or not of
      #   that form, is answered `404 BUDGET_NOT_FOUND`.
      # @param limit [Numeric] In the budget's unit: a whole number of tokens (1 to 1,000,000,000,000), or
      #   US dollars (0.01 to 10,000,000, to the billionth).
      # @param period [String, Symbol] How often the budget starts again: every UTC day, or on the first of
      #   every UTC month. One of `day`, `month`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::Budget]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `BUDGET_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 413 `PAYLOAD_TOO_LARGE`
      # @raise [Agentry::BadRequestError] 415 `UNSUPPORTED_MEDIA_TYPE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def update(budget_id, limit: nil, period: nil, request_options: nil)
        body = {}
        body["limit"] = limit unless limit.nil?
        body["period"] = period unless period.nil?
        api_request(
          :patch,
          "/budgets/#{path_segment(:budget_id, budget_id)}",
          type: "Budget",
          body: body,
          options: request_options
        )
      end

      # Delete a budget.
      #
      # Removes the budget: the messages it counted are no longer limited by it.
      #
      # Requires the `budgets:write` scope. Counts against `requestsPerMinute`, `deletePerMinute`.
      #
      # Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it
      # is retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`;
      # `IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets
      # that answer, and the request runs once.
      #
      # @param budget_id [String] The budget's id (`bdg_…`). An id of another account's budget, or not of
      #   that form, is answered `404 BUDGET_NOT_FOUND`.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra
      #   `headers:`, and `idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a
      #   new random one.
      # @return [Models::BudgetDeletedResponseData]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::NotFoundError] 404 `BUDGET_NOT_FOUND`
      # @raise [Agentry::ConflictError] 409 `IDEMPOTENCY_KEY_IN_USE`
      # @raise [Agentry::BadRequestError] 422 `IDEMPOTENCY_KEY_REUSED`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def delete(budget_id, request_options: nil)
        api_request(
          :delete,
          "/budgets/#{path_segment(:budget_id, budget_id)}",
          type: "BudgetDeletedResponseData",
          options: request_options
        )
      end
    end

    # Who changed what in the account, when and from where: every change through any route, the console or
    # the admin CLI (scope `audit:read`).
    class AuditEvents < Agentry::Resource
      # List audit events.
      #
      # Every change made to the account through any route, the console or the admin CLI, newest first
      # unless `order=asc`: who made it (a member, a key or the CLI), what it changed, when and from where.
      # Filters: `actorType`, `actorId`, `action`, `targetType`, `targetId`, and the time range `since`
      # (inclusive) to `until` (exclusive). Cursor-paged: `limit` 1 to 100 (default 20); `before=<id>`
      # returns the items just older than that one, `after=<id>` those just newer, presented in the list's
      # order either way; the next page's cursor is the last item's id (`before` it when newest first,
      # `after` it when oldest first). A cursor that is not an item of this list (unknown, or another
      # agent's) is answered `400 INVALID_REQUEST`, as are unknown or repeated parameters and values out of
      # range.
      #
      # Requires the `audit:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param limit [Integer] Items per page, from 1 to 100. Server default: `20`.
      # @param before [String] Only audit events older than this one (its id): the page just below it. The
      #   next page of a `desc` list is `before` its last item's id. Not with `after`.
      # @param after [String] Only audit events newer than this one (its id): the page just above it. The
      #   next page of an `asc` list is `after` its last item's id. Not with `before`.
      # @param order [String, Symbol] `desc`: newest first; `asc`: oldest first. Cursors keep their meaning
      #   either way. Server default: `desc`. One of `asc`, `desc`.
      # @param actor_type [String, Symbol] Only changes made by this kind of actor: a console `member`, an
      #   API `key`, the `cli`. One of `member`, `key`, `cli`.
      # @param actor_id [String] Only changes made by this member (`usr_…`) or key (`key_…`).
      # @param action [String] Only this action, `<resource>.<verb>` (`agent.update`, `key.revoke`, …).
      # @param target_type [String] Only changes to this kind of resource (`agent`, `key`, `member`,
      #   `webhook`, …).
      # @param target_id [String] Only changes to this resource (its id).
      # @param since [Time, String] Only changes made at or after this time.
      # @param until_ [Time, String] Only changes made before this time.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @return [Agentry::CursorPage<Models::AuditEvent>] the first page asked for; enumerating it walks every page
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def list(
        limit: nil,
        before: nil,
        after: nil,
        order: nil,
        actor_type: nil,
        actor_id: nil,
        action: nil,
        target_type: nil,
        target_id: nil,
        since: nil,
        until_: nil,
        request_options: nil
      )
        query = {
          "limit" => limit,
          "before" => before,
          "after" => after,
          "order" => order,
          "actorType" => actor_type,
          "actorId" => actor_id,
          "action" => action,
          "targetType" => target_type,
          "targetId" => target_id,
          "since" => since,
          "until" => until_
        }
        api_cursor_paginate(
          "/audit-events",
          query: query,
          pagination: { before_parameter: "before", after_parameter: "after", order_parameter: "order",
                        items_field: "data", info_field: "pagination", has_more_field: "hasMore", cursor_field: "id",
                        item_type: "AuditEvent", info_type: "CursorPagination" },
          options: request_options
        )
      end

      # Export audit events.
      #
      # Every audit event matching the filters, oldest first, as NDJSON (`application/x-ndjson`): one
      # `AuditEvent` per line, each line ending in `\n`. The response is streamed as it is read, so its size
      # is not limited; no events is `200` with an empty body. Filters: `actorType`, `actorId`, `action`,
      # `targetType`, `targetId`, and the time range `since` (inclusive) to `until` (exclusive). A failure
      # after the first line cuts the response short, which HTTP clients report as an incomplete body: retry
      # the export.
      #
      # Requires the `audit:read` scope. Counts against `requestsPerMinute`, `listPerMinute`.
      #
      # Without a block, returns an Agentry::NDJSONStream, read line by line when you iterate it. With a
      # block, reads it at once, yielding each item. Leaving the loop early closes the connection. Once
      # started, the answer is never retried: one cut short raises Agentry::APIConnectionError after the
      # items that arrived whole.
      #
      # Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it
      # again has the same effect.
      #
      # @param actor_type [String, Symbol] Only changes made by this kind of actor: a console `member`, an
      #   API `key`, the `cli`. One of `member`, `key`, `cli`.
      # @param actor_id [String] Only changes made by this member (`usr_…`) or key (`key_…`).
      # @param action [String] Only this action, `<resource>.<verb>` (`agent.update`, `key.revoke`, …).
      # @param target_type [String] Only changes to this kind of resource (`agent`, `key`, `member`,
      #   `webhook`, …).
      # @param target_id [String] Only changes to this resource (its id).
      # @param since [Time, String] Only changes made at or after this time.
      # @param until_ [Time, String] Only changes made before this time.
      # @param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra
      #   `headers:`.
      # @yieldparam item [Models::AuditEvent] each item, in order
      # @return [Agentry::NDJSONStream<Models::AuditEvent>]
      # @raise [Agentry::BadRequestError] 400 `INVALID_REQUEST`
      # @raise [Agentry::AuthenticationError] 401 `UNAUTHORIZED`
      # @raise [Agentry::PermissionDeniedError] 403 `FORBIDDEN`
      # @raise [Agentry::RateLimitError] 429 `RATE_LIMIT_EXCEEDED`
      # @raise [Agentry::InternalServerError] 500 `INTERNAL_ERROR`
      # @raise [Agentry::InternalServerError] 503 `AGENT_UNAVAILABLE`
      def export(
        actor_type: nil,
        actor_id: nil,
        action: nil,
        target_type: nil,
        target_id: nil,
        since: nil,
        until_: nil,
        request_options: nil,
        &block
      )
        query = {
          "actorType" => actor_type,
          "actorId" => actor_id,
          "action" => action,
          "targetType" => target_type,
          "targetId" => target_id,
          "since" => since,
          "until" => until_
        }
        api_lines(
          :get,
          "/audit-events/export",
          type: "AuditEvent",
          query: query,
          options: request_options,
          &block
        )
      end
    end
  end
end
