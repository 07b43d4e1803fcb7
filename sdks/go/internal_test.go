package agentry

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestShouldRetry(t *testing.T) {
	status := func(s int, code ErrorCode) attemptFailure {
		return attemptFailure{kind: failureStatus, status: s, code: code}
	}
	cases := []struct {
		name    string
		failure attemptFailure
		want    [3]bool // idempotent, unsafe, message
	}{
		{"429", status(429, ErrorCodeRateLimitExceeded), [3]bool{true, true, true}},
		{"408", status(408, ""), [3]bool{true, true, true}},
		{"409 other", status(409, ""), [3]bool{true, false, false}},
		{"409 AGENT_INACTIVE", status(409, ErrorCodeAgentInactive), [3]bool{false, false, false}},
		{"403 INSUFFICIENT_QUOTA", status(403, ErrorCodeInsufficientQuota), [3]bool{false, false, false}},
		{"400", status(400, ErrorCodeInvalidRequest), [3]bool{false, false, false}},
		{"404", status(404, ErrorCodeAgentNotFound), [3]bool{false, false, false}},
		{"500", status(500, ErrorCodeInternalError), [3]bool{true, false, false}},
		{"502", status(502, ErrorCodeModelError), [3]bool{true, false, false}},
		{"503", status(503, ErrorCodeAgentUnavailable), [3]bool{true, false, true}},
		{"timeout", attemptFailure{kind: failureTimeout}, [3]bool{true, false, false}},
		{"broken connection", attemptFailure{kind: failureConnection}, [3]bool{true, false, false}},
		{"connection never made", attemptFailure{kind: failureConnection, unsent: true}, [3]bool{true, true, true}},
	}
	for _, c := range cases {
		for i, safety := range []retrySafety{retryIdempotent, retryUnsafe, retryMessage} {
			if got := shouldRetry(c.failure, safety); got != c.want[i] {
				t.Errorf("%s, safety %d: got %v, want %v", c.name, safety, got, c.want[i])
			}
		}
	}
}

func TestRetryDelay(t *testing.T) {
	noJitter := func() float64 { return 0 }
	fullJitter := func() float64 { return 1 }
	for retry, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second} {
		if got := retryDelay(retry, 0, false, time.Minute, noJitter); got != want {
			t.Errorf("retry %d: got %v, want %v", retry, got, want)
		}
	}
	if got := retryDelay(0, 0, false, time.Minute, fullJitter); got != 375*time.Millisecond {
		t.Errorf("25%% jitter: got %v", got)
	}
	if got := retryDelay(3, 2*time.Second, true, time.Minute, noJitter); got != 2*time.Second {
		t.Errorf("Retry-After replaces the backoff: got %v", got)
	}
	if got := retryDelay(0, 0, true, time.Minute, noJitter); got != 0 {
		t.Errorf("Retry-After: 0 means at once: got %v", got)
	}
	if got := retryDelay(0, 90*time.Second, true, 100*time.Millisecond, noJitter); got != 100*time.Millisecond {
		t.Errorf("capped at the max delay: got %v", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	cases := map[string]struct {
		want time.Duration
		ok   bool
	}{
		"58":                            {58 * time.Second, true},
		"1.5":                           {1500 * time.Millisecond, true},
		" 3 ":                           {3 * time.Second, true},
		"":                              {0, false},
		"-3":                            {0, false},
		"soon":                          {0, false},
		"Fri, 20 Nov 2026 09:30:10 GMT": {10 * time.Second, true},
		"Fri, 20 Nov 2026 09:29:00 GMT": {0, true},
	}
	for value, c := range cases {
		got, ok := parseRetryAfter(value, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: got %v %v, want %v %v", value, got, ok, c.want, c.ok)
		}
	}
}

func TestIsUnsent(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	listener.Close()
	_, err = http.Get("http://" + addr + "/")
	if err == nil || !isUnsent(err) {
		t.Fatalf("a refused connection is unsent: %v", err)
	}
	if isUnsent(io.ErrUnexpectedEOF) || isUnsent(errors.New("reset")) {
		t.Fatal("other failures are not unsent")
	}
}

func TestSSEReader(t *testing.T) {
	body := "\uFEFF: ping\r\nid: 1\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\n" + // CRLF, a comment, a BOM
		"id: 2\revent: b\rdata: line one\rdata:line two\r\r" + // CR alone
		"id: 3\nevent: c\ndata\nretry: 10\nunknown: x\n\n" + // a data field with no value
		"\n\n" + // blank lines dispatch nothing
		"id: 4\nevent: d\ndata: unfinished" // no blank line: dropped
	r := newSSEReader(strings.NewReader(body))
	want := []sseEvent{
		{id: "1", event: "a", data: `{"x":1}`},
		{id: "2", event: "b", data: "line one\nline two"},
		{id: "3", event: "c", data: ""},
	}
	for i, w := range want {
		got, err := r.next()
		if err != nil || got != w {
			t.Fatalf("event %d: got %+v, %v; want %+v", i, got, err, w)
		}
	}
	if _, err := r.next(); err != io.EOF {
		t.Fatalf("the unfinished event is dropped: %v", err)
	}
}

func TestSSEReaderSplitCRLFAcrossReads(t *testing.T) {
	// A CR at the end of one read and its LF at the start of the next make one line end, not two.
	r := newSSEReader(io.MultiReader(strings.NewReader("event: a\r"), strings.NewReader("\ndata: 1\r"),
		strings.NewReader("\n\r\n")))
	got, err := r.next()
	if err != nil || got != (sseEvent{event: "a", data: "1"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestAppendField(t *testing.T) {
	for in, want := range map[string]string{`{}`: `{"stream":true}`, `{"a":1}`: `{"a":1,"stream":true}`, ` { } `: `{ "stream":true}`} {
		got, err := appendField([]byte(in), "stream", true)
		if err != nil || string(got) != want {
			t.Errorf("%s: got %s, %v", in, got, err)
		}
	}
	if _, err := appendField([]byte(`[]`), "x", 1); err == nil {
		t.Error("not an object")
	}
}
