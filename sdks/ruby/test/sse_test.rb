# frozen_string_literal: true

require_relative "test_helper"

class SSEParserTest < Minitest::Test
  E = Agentry::SSEParser::Event

  def read(chunks)
    parser = Agentry::SSEParser.new
    chunks.flat_map { |chunk| parser.feed(chunk) }
  end

  GATEWAY = "id: 1\nevent: message.started\ndata: {\"id\":\"msg_1\"}\n\n" \
            "id: 2\nevent: message.delta\ndata: {\"text\":\"Hé \"}\n\n" \
            "id: 3\nevent: message.completed\ndata: {\"text\":\"Hé \"}\n\n"
  EXPECTED = [
    E.new(id: "1", event: "message.started", data: "{\"id\":\"msg_1\"}"),
    E.new(id: "2", event: "message.delta", data: "{\"text\":\"Hé \"}"),
    E.new(id: "3", event: "message.completed", data: "{\"text\":\"Hé \"}")
  ].freeze

  def test_reads_the_gateways_frames
    assert_equal EXPECTED, read([GATEWAY])
  end

  def test_joins_events_split_anywhere_across_chunks_even_one_byte_at_a_time
    bytes = GATEWAY.b
    assert_equal EXPECTED, read(bytes.each_char.to_a)
    (1...bytes.size).step(7) { |at| assert_equal EXPECTED, read([bytes[0, at], bytes[at..]]) }
  end

  def test_decodes_utf8_characters_split_between_chunks
    bytes = "data: 日本\n\n".b
    events = read([bytes[0, 8], bytes[8..]])
    assert_equal "日本", events[0].data
    assert_equal Encoding::UTF_8, events[0].data.encoding
  end

  def test_joins_multi_line_data_with_newlines
    assert_equal "a\nb\n", read(["data: a\ndata: b\ndata:\n\n"])[0].data
    assert_equal "no space", read(["data:no space\n\n"])[0].data
  end

  def test_skips_comments_such_as_the_15_second_ping
    assert_equal [E.new(id: nil, event: nil, data: "x")], read([": ping\n\n", ": ping\n", "data: x\n\n"])
  end

  def test_accepts_crlf_and_cr_line_ends_split_between_chunks_too
    expected = [E.new(id: "1", event: "e", data: "x"), E.new(id: nil, event: nil, data: "y")]
    assert_equal expected, read(["id: 1\r\nevent: e\r\ndata: x\r\n\r\ndata: y\r\n\r\n"])
    assert_equal expected, read(["id: 1\revent: e\rdata: x\r\r", "data: y\r\r"])
    assert_equal expected, read(["id: 1\r", "\nevent: e\r", "\ndata: x\r", "\n\r", "\ndata: y\r\n\r", "\n"])
  end

  def test_drops_an_event_the_stream_did_not_finish
    assert_equal [E.new(id: nil, event: nil, data: "done")], read(["data: done\n\n", "data: half"])
    assert_equal [], read(["event: only-a-name\n\n"])
  end

  def test_ignores_a_byte_order_mark_and_unknown_fields
    assert_equal [E.new(id: nil, event: "e", data: "x")], read(["\xEF\xBB".b, "\xBFevent: e\nretry: 5\nfoo: bar\ndata: x\n\n".b])
  end
end
