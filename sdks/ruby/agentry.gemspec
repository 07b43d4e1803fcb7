# frozen_string_literal: true

require_relative "lib/agentry/version"

Gem::Specification.new do |spec|
  spec.name = "agentry"
  spec.version = Agentry::VERSION
  spec.summary = "Official Ruby client for the Agentry Agent Management API"
  spec.description = "Create, list, update and delete AI agents, send them messages and stream their replies, " \
                     "manage API keys and verify webhook deliveries, with typed models, typed errors, retries, " \
                     "pagination and streaming. Standard library only (net/http, json, uri, openssl)."
  spec.authors = ["Agentry"]
  spec.license = "Apache-2.0"
  spec.required_ruby_version = ">= 3.1"
  spec.files = Dir["lib/**/*.rb", "README.md"]
  spec.require_paths = ["lib"]
  spec.metadata["rubygems_mfa_required"] = "true"
end
