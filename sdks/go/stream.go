package agentry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStreamClosed is returned by [MessageStream.Text] and [MessageStream.FinalMessage] when the stream was
// closed before its reply was complete.
var ErrStreamClosed = errors.New("agentry: the stream was closed before the reply was complete")

var errIdleTimeout = errors.New("stream idle timeout")

// MessageStream is a reply streamed as it is written. Read it like a bufio.Scanner:
//
//	stream := client.Agents.Messages.Stream(ctx, agentID, agentry.SendMessageParams{Text: "Hello"})
//	defer stream.Close()
//	for stream.Next() {
//		if delta, ok := stream.Current().(*agentry.MessageDeltaEvent); ok {
//			fmt.Print(delta.Data.Text)
//		}
//	}
//	if err := stream.Err(); err != nil { ... }
//
// A failure before the stream starts (404, 409, 429, ...) is retried like any call's, then reported by Err. A
// failure after it started arrives as the stream's error event and is reported by Err as the [*APIError] its
// code would have been as a response (AGENT_UNAVAILABLE: status 503, ErrInternalServer); a started stream is
// never retried. A stream that ends without its message.completed event fails with a [*ConnectionError], and
// so does one silent for longer than the client's timeout (the service sends a keep-alive every 15 s).
// Cancelling the context or calling Close ends the stream and closes its connection; the service then stops
// the model call.
type MessageStream struct {
	resp      *http.Response
	attempt   *attempt
	reader    *sseReader
	idle      time.Duration
	idleTimer *time.Timer

	current MessageStreamEvent
	err     error
	done    bool
	text    strings.Builder
	final   *Reply

	closed    atomic.Bool
	closeOnce sync.Once
}

func newMessageStream(ctx context.Context, c *Client, req *request, opts []Option) *MessageStream {
	cfg, err := c.callConfig(opts)
	if err != nil {
		return &MessageStream{err: err, done: true}
	}
	resp, a, err := c.openStream(ctx, cfg, req, mediaEventStream)
	if err != nil {
		return &MessageStream{err: err, done: true}
	}
	s := &MessageStream{resp: resp, attempt: a, idle: cfg.timeout}
	s.idleTimer = time.AfterFunc(cfg.timeout, func() { a.cancel(errIdleTimeout) })
	s.idleTimer.Stop()
	s.reader = newSSEReader(&activityReader{r: resp.Body, onRead: func() { s.idleTimer.Reset(s.idle) }})
	return s
}

// failedStream is a stream that could not be sent at all.
func failedStream(err error) *MessageStream { return &MessageStream{err: err, done: true} }

// Next advances to the next event and reports whether there is one. It returns false at the end of the stream
// or on a failure, which Err then reports.
func (s *MessageStream) Next() bool {
	if s.done {
		return false
	}
	// The silence timer runs only while waiting for the server, not while the caller handles an event.
	s.idleTimer.Reset(s.idle)
	defer s.idleTimer.Stop()
	for {
		raw, err := s.reader.next()
		if err != nil {
			s.finish(s.failureOf(err))
			return false
		}
		if raw.event == "error" {
			s.finish(errorFromStreamEvent([]byte(raw.data), s.resp.Header))
			return false
		}
		event, err := decodeMessageStreamEvent(raw.event, raw.id, []byte(raw.data))
		if err != nil {
			s.finish(&APIError{
				StatusCode: s.resp.StatusCode,
				Message:    fmt.Sprintf("the %q event's data is not the JSON expected: %v", raw.event, err),
				RequestID:  s.RequestID(),
				Header:     s.resp.Header,
				Body:       []byte(raw.data),
			})
			return false
		}
		if event == nil {
			// Event types added in later API versions are skipped, so an older SDK keeps working.
			continue
		}
		switch e := event.(type) {
		case *MessageDeltaEvent:
			s.text.WriteString(e.Data.Text)
		case *MessageCompletedEvent:
			reply := e.Data
			s.final = &reply
			s.finish(nil)
		}
		s.current = event
		return true
	}
}

// Current returns the event Next advanced to: a *MessageStartedEvent, *MessageDeltaEvent, *ToolCallEvent,
// *ToolResultEvent (when the model calls tools of the agent's plugins) or *MessageCompletedEvent.
func (s *MessageStream) Current() MessageStreamEvent { return s.current }

// Err returns the failure that ended the stream, or nil when it completed or was closed.
func (s *MessageStream) Err() error { return s.err }

// Close ends the stream and closes its connection. It is safe to call more than once, and from another
// goroutine while Next waits.
func (s *MessageStream) Close() error {
	s.closed.Store(true)
	s.release()
	return nil
}

// RequestID returns the request's id (X-Request-Id) once the stream has started, else "".
func (s *MessageStream) RequestID() string {
	if s.resp == nil {
		return ""
	}
	return s.resp.Header.Get("X-Request-Id")
}

// Text reads the rest of the stream and returns the whole reply text (the deltas joined).
func (s *MessageStream) Text() (string, error) {
	if _, err := s.FinalMessage(); err != nil {
		return s.text.String(), err
	}
	return s.text.String(), nil
}

// FinalMessage reads the rest of the stream and returns the completed reply (the message.completed event's
// data), the same Reply that Send returns.
func (s *MessageStream) FinalMessage() (*Reply, error) {
	for s.Next() {
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.final == nil {
		return nil, ErrStreamClosed
	}
	return s.final, nil
}

// failureOf turns a read error into the stream's error: nil when the caller closed the stream.
func (s *MessageStream) failureOf(err error) error {
	switch {
	case s.closed.Load():
		return nil
	case context.Cause(s.attempt.ctx) == errIdleTimeout:
		return &ConnectionError{Message: fmt.Sprintf("the stream sent nothing for %v", s.idle), Timeout: true}
	case s.attempt.parent.Err() != nil:
		return canceled(s.attempt.parent)
	case errors.Is(err, io.EOF):
		return &ConnectionError{Message: "the stream ended before the reply was complete"}
	}
	return &ConnectionError{Message: "the stream broke", Err: err}
}

func (s *MessageStream) finish(err error) {
	s.done = true
	s.err = err
	s.current = nil
	s.release()
}

func (s *MessageStream) release() {
	s.closeOnce.Do(func() {
		if s.attempt == nil {
			return
		}
		s.idleTimer.Stop()
		s.attempt.stop()
		s.resp.Body.Close()
	})
}
