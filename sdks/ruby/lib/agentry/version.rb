# frozen_string_literal: true

module Agentry
  VERSION = "0.1.0"
end
