# frozen_string_literal: true

require "json"
require "tempfile"

module Conformance
  # The live service of tools/conformance/serve.ts, spawned from the repository root as every SDK's suite does.
  # Closing its stdin stops it; if this process dies first, the pipe closes and it stops anyway.
  class Launcher
    REPO_ROOT = File.expand_path("../../../..", __dir__)
    COMMAND = ["node", "--import", "tsx", "tools/conformance/serve.ts"].freeze

    attr_reader :info

    def self.start(timeout: 90)
      launcher = new
      launcher.start(timeout)
      launcher
    end

    def start(timeout)
      @stderr = Tempfile.new("agentry-conformance-launcher")
      @io = IO.popen(COMMAND, "r+", chdir: REPO_ROOT, err: @stderr.path)
      line = read_line(timeout)
      @info = JSON.parse(line)
    rescue StandardError
      stop
      raise
    end

    def stop
      return unless @io

      pid = @io.pid
      @io.close_write unless @io.closed?
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
      until Process.waitpid(pid, Process::WNOHANG)
        if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
          Process.kill("KILL", pid)
          Process.waitpid(pid)
          break
        end
        sleep 0.05
      end
      @io.close unless @io.closed?
      @io = nil
    rescue Errno::ECHILD
      @io = nil
    ensure
      @stderr&.close!
    end

    private

    def read_line(timeout)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
      buffer = +""
      loop do
        newline = buffer.index("\n")
        return buffer[0, newline] if newline

        remaining = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
        raise "the launcher printed nothing in #{timeout} s: #{stderr_text}" if remaining <= 0
        next unless @io.wait_readable(remaining)

        chunk = @io.read_nonblock(4096, exception: false)
        raise "the launcher exited before it was ready: #{stderr_text}" if chunk.nil?

        buffer << chunk unless chunk == :wait_readable
      end
    end

    def stderr_text
      File.read(@stderr.path)
    end
  end
end
