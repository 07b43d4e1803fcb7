# frozen_string_literal: true

require "json"
require "socket"
require "uri"

# A small HTTP/1.1 server on a free loopback port, for unit tests: each request is answered by the next handler
# (the last one repeats), and every request is recorded. Handlers write to the socket themselves, so a test can
# answer slowly, stream, or break the connection, as a real server or network might.
class FakeServer
  Request = Struct.new(:method, :path, :query, :headers, :body, :raw_body, keyword_init: true)

  attr_reader :requests, :closed_early

  def initialize(*handlers)
    @handlers = handlers
    @requests = []
    @closed_early = Queue.new
    @lock = Mutex.new
    @server = TCPServer.new("127.0.0.1", 0)
    @connections = []
    @thread = Thread.new { accept_loop }
  end

  # Whether a client closed a connection while its answer was still being written, within +seconds+.
  def saw_early_close?(seconds = 5)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
    sleep 0.01 while @closed_early.empty? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    !@closed_early.empty?
  end

  # The base URL of a client talking to this server.
  def base_url
    "http://127.0.0.1:#{@server.addr[1]}/v1"
  end

  def stop
    @server.close
    @thread.kill
    @lock.synchronize { @connections.each { |thread| thread.kill } }
  end

  # A port nothing listens on: connecting is refused.
  def self.refused_url
    server = TCPServer.new("127.0.0.1", 0)
    port = server.addr[1]
    server.close
    "http://127.0.0.1:#{port}/v1"
  end

  # --- Handlers --------------------------------------------------------------------------------------------------

  # A complete response with a JSON body (or a String body as is).
  def self.json(status, body, headers = {})
    lambda do |_request, socket|
      text = body.is_a?(String) ? body : JSON.generate(body)
      write_response(socket, status, { "content-type" => "application/json; charset=utf-8",
                                       "x-request-id" => "req_header" }.merge(headers), text)
    end
  end

  # The API's success envelope around +data+.
  def self.data(data, status: 200, headers: {}, **extra)
    json(status, { "success" => true, "data" => data }.merge(extra.transform_keys(&:to_s)), headers)
  end

  # The API's error envelope.
  def self.api_error(status, code, details: nil, headers: {}, message: nil)
    error = { "code" => code, "message" => message || "#{code} happened.", "requestId" => "req_body" }
    error["details"] = details if details
    json(status, { "success" => false, "error" => error }, headers)
  end

  # An event stream: +chunks+ written one by one (each may be an Integer, a pause in milliseconds), then the end
  # of the body unless +cut+, which closes the connection mid-body.
  def self.sse(chunks, headers: {}, cut: false)
    lambda do |_request, socket|
      head = { "content-type" => "text/event-stream", "x-request-id" => "req_stream",
               "transfer-encoding" => "chunked" }.merge(headers)
      socket.write(status_line(200) + head.map { |name, value| "#{name}: #{value}\r\n" }.join + "\r\n")
      chunks.each do |chunk|
        next sleep(chunk / 1000.0) if chunk.is_a?(Integer)

        socket.write("#{chunk.bytesize.to_s(16)}\r\n#{chunk}\r\n")
      end
      socket.write("0\r\n\r\n") unless cut
    end
  end

  # Never answers; waits until the client gives up and closes.
  def self.hang
    ->(_request, socket) { socket.read }
  end

  # Closes the connection without answering.
  def self.drop
    ->(_request, _socket) {}
  end

  # Answers after +ms+ milliseconds with +handler+.
  def self.delayed(ms, handler)
    lambda do |request, socket|
      sleep(ms / 1000.0)
      handler.call(request, socket)
    end
  end

  def self.status_line(status)
    "HTTP/1.1 #{status} #{status == 200 ? 'OK' : 'Status'}\r\n"
  end

  def self.write_response(socket, status, headers, body)
    head = headers.merge("content-length" => body.bytesize.to_s, "connection" => "close")
    socket.write(status_line(status) + head.map { |name, value| "#{name}: #{value}\r\n" }.join + "\r\n" + body)
  end

  private

  def accept_loop
    loop do
      socket = @server.accept
      @lock.synchronize { @connections << Thread.new { serve(socket) } }
    end
  rescue IOError, Errno::EBADF
    nil
  end

  def serve(socket)
    request = read_request(socket)
    return unless request

    handler = @lock.synchronize do
      @requests << request
      @handlers[[@requests.size, @handlers.size].min - 1]
    end
    handler.call(request, socket)
  rescue Errno::EPIPE, Errno::ECONNRESET, IOError
    @closed_early << request
  ensure
    socket.close unless socket.closed?
  end

  def read_request(socket)
    line = socket.gets("\r\n") or return nil
    method, target = line.split(" ")
    headers = {}
    while (header = socket.gets("\r\n")) && header != "\r\n"
      name, value = header.split(":", 2)
      headers[name.strip.downcase] = value.strip
    end
    raw = headers["content-length"] ? socket.read(headers["content-length"].to_i) : nil
    uri = URI(target)
    Request.new(method: method, path: uri.path, query: URI.decode_www_form(uri.query || "").to_h, headers: headers,
                body: raw && !raw.empty? ? JSON.parse(raw) : nil, raw_body: raw)
  end
end
