# frozen_string_literal: true

# The official Ruby client for the Agentry Agent Management API. Start with Agentry::Client.
module Agentry
end

require_relative "agentry/version"
require_relative "agentry/generated/api"
require_relative "agentry/errors"
require_relative "agentry/retry_policy"
require_relative "agentry/model"
require_relative "agentry/sse"
require_relative "agentry/transport"
require_relative "agentry/page"
require_relative "agentry/message_stream"
require_relative "agentry/ndjson_stream"
require_relative "agentry/resource"
require_relative "agentry/polling"
require_relative "agentry/generated/models"
require_relative "agentry/generated/resources"
require_relative "agentry/webhooks"
require_relative "agentry/client"
