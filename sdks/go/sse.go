package agentry

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// sseEvent is one server-sent event, its fields as received.
type sseEvent struct {
	id string
	// event is empty when the event had no event: field (which the SSE standard calls "message").
	event string
	// data is the data: lines joined with "\n".
	data string
}

// sseReader reads a text/event-stream body as events, by the SSE standard's framing: CRLF, LF or CR line ends,
// multi-line data:, comments (": ping") skipped, an unfinished last event dropped.
type sseReader struct {
	scanner *bufio.Scanner
	lastID  string
	first   bool
}

const maxSSELine = 16 << 20

func newSSEReader(r io.Reader) *sseReader {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	scanner.Split(scanSSELines)
	return &sseReader{scanner: scanner, first: true}
}

// next returns the next event; io.EOF when the body ended, or the error that broke it.
func (r *sseReader) next() (sseEvent, error) {
	var data strings.Builder
	var event string
	hasData := false
	for r.scanner.Scan() {
		line := r.scanner.Text()
		if r.first {
			line = strings.TrimPrefix(line, "\uFEFF")
			r.first = false
		}
		if line == "" {
			if !hasData {
				event = ""
				continue
			}
			return sseEvent{id: r.lastID, event: event, data: data.String()}, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				r.lastID = value
			}
		}
	}
	if err := r.scanner.Err(); err != nil {
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// scanSSELines splits at CRLF, LF or a lone CR. A CR at the end of the data read so far waits for the next byte,
// which may be its LF.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil
	}
	if atEOF && len(data) > 0 {
		// An unterminated last line cannot complete an event; hand it on so the reader sees the end.
		return len(data), data, nil
	}
	return 0, nil, nil
}

// activityReader calls onRead whenever bytes arrive, so a silent stream can be timed out.
type activityReader struct {
	r      io.Reader
	onRead func()
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.onRead()
	}
	return n, err
}
