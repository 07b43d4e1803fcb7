package agentry

import (
	"io"
	"regexp"
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
		want    bool
	}{
		{"429", status(429, ErrorCodeRateLimitExceeded), true},
		{"408", status(408, ""), true},
		{"409 IDEMPOTENCY_KEY_IN_USE", status(409, ErrorCodeIdempotencyKeyInUse), true},
		{"409 AGENT_INACTIVE", status(409, ErrorCodeAgentInactive), false},
		{"403 INSUFFICIENT_QUOTA", status(403, ErrorCodeInsufficientQuota), false},
		{"422 IDEMPOTENCY_KEY_REUSED", status(422, ErrorCodeIdempotencyKeyReused), false},
		{"400", status(400, ErrorCodeInvalidRequest), false},
		{"404", status(404, ErrorCodeAgentNotFound), false},
		{"500", status(500, ErrorCodeInternalError), true},
		{"502", status(502, ErrorCodeModelError), true},
		{"503", status(503, ErrorCodeAgentUnavailable), true},
		{"timeout", attemptFailure{kind: failureTimeout}, true},
		{"connection", attemptFailure{kind: failureConnection}, true},
	}
	for _, c := range cases {
		if got := shouldRetry(c.failure); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIdempotencyKeys(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 50 {
		key := newIdempotencyKey()
		if !uuid.MatchString(key) || seen[key] {
			t.Fatalf("a new random version 4 UUID each time: %q", key)
		}
		seen[key] = true
	}
	for method, want := range map[string]bool{"GET": false, "POST": true, "PATCH": true, "DELETE": true, "PUT": true} {
		if takesIdempotencyKey(method) != want {
			t.Errorf("%s: want %v", method, want)
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
