package agentry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
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
// never sent again. A connection that drops, or stays silent for longer than the client's timeout (the service
// sends a keep-alive every 15 s), after the stream started is resumed where it stopped (Last-Event-ID), up to
// [MaxReconnects] times in a row, unseen by the caller: Next yields every event once, in order. Only then does
// the stream fail with a [*ConnectionError]. So that the service goes on generating meanwhile, Stream sends
// onDisconnect "continue" unless the params say otherwise. Cancelling the context or calling Close ends the
// stream and closes its connection.
type MessageStream struct {
	resp      *http.Response
	attempt   *attempt
	reader    *sseReader
	idle      time.Duration
	idleTimer *time.Timer

	// What resuming needs: the call, and how far it got.
	ctx        context.Context
	client     *Client
	cfg        config
	req        *request
	messageID  string
	lastID     int
	resumed    bool
	reconnects int

	current MessageStreamEvent
	err     error
	done    bool
	text    strings.Builder
	final   *Reply

	closed    atomic.Bool
	closeOnce sync.Once
}

// MaxReconnects is how many times in a row a dropped stream is resumed before it fails.
const MaxReconnects = 3

// reconnectDelay is the wait before the first resumption; each next one waits twice as long.
const reconnectDelay = 200 * time.Millisecond

func newMessageStream(ctx context.Context, c *Client, req *request, opts []Option) *MessageStream {
	cfg, err := c.callConfig(opts)
	if err != nil {
		return &MessageStream{err: err, done: true}
	}
	req, err = continuing(req)
	if err != nil {
		return &MessageStream{err: err, done: true}
	}
	resp, a, err := c.openStream(ctx, cfg, req, mediaEventStream)
	if err != nil {
		return &MessageStream{err: err, done: true}
	}
	s := &MessageStream{idle: cfg.timeout, ctx: ctx, client: c, cfg: cfg, req: req}
	s.attach(resp, a)
	return s
}

// continuing asks the service to go on generating when the connection drops, unless the caller chose.
func continuing(req *request) (*request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(req.body, &fields); err != nil {
		return nil, fmt.Errorf("agentry: encoding the request: %w", err)
	}
	if _, chosen := fields["onDisconnect"]; chosen {
		return req, nil
	}
	body, err := appendField(req.body, "onDisconnect", "continue")
	if err != nil {
		return nil, fmt.Errorf("agentry: encoding the request: %w", err)
	}
	copied := *req
	copied.body = body
	return &copied, nil
}

// attach makes an opened response the stream's current connection.
func (s *MessageStream) attach(resp *http.Response, a *attempt) {
	s.resp, s.attempt = resp, a
	timer := time.AfterFunc(s.idle, func() { a.cancel(errIdleTimeout) })
	timer.Stop()
	s.idleTimer = timer
	s.reader = newSSEReader(&activityReader{r: resp.Body, onRead: func() { timer.Reset(s.idle) }})
}

// resume opens the message's events after the last one received, on a new connection.
func (s *MessageStream) resume() error {
	s.reconnects++
	s.resumed = true
	s.closeConnection()
	select {
	case <-time.After(reconnectDelay << (s.reconnects - 1)):
	case <-s.ctx.Done():
		return canceled(s.ctx)
	}
	cfg := s.cfg
	cfg.headers = s.cfg.headers.Clone()
	if cfg.headers == nil {
		cfg.headers = http.Header{}
	}
	cfg.headers.Set("Last-Event-ID", strconv.Itoa(s.lastID))
	cfg.bodyFields = nil
	req := &request{method: http.MethodGet, path: s.req.path + "/" + url.PathEscape(s.messageID) + "/events"}
	resp, a, err := s.client.openStream(s.ctx, cfg, req, mediaEventStream)
	if err != nil {
		return err
	}
	s.attach(resp, a)
	if s.closed.Load() {
		s.closeConnection()
	}
	return nil
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
	defer func() { s.idleTimer.Stop() }()
	for {
		raw, err := s.reader.next()
		if err != nil {
			failure := s.failureOf(err)
			var dropped *ConnectionError
			if errors.As(failure, &dropped) && s.messageID != "" && s.reconnects < MaxReconnects {
				if failure = s.resume(); failure == nil {
					continue
				}
			}
			s.finish(failure)
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
		// A resumed connection starts after the last event seen; an event seen already is never yielded twice.
		if n, err := strconv.Atoi(raw.id); err == nil && n > 0 {
			if s.resumed && n <= s.lastID {
				continue
			}
			s.lastID = max(s.lastID, n)
		}
		s.reconnects = 0
		switch e := event.(type) {
		case *MessageStartedEvent:
			if s.messageID == "" {
				s.messageID = e.Data.ID
			}
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
// goroutine while Next waits. The reply is still generated and stored unless the stream was sent with
// onDisconnect "cancel".
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
	s.closeOnce.Do(s.closeConnection)
}

func (s *MessageStream) closeConnection() {
	if s.attempt == nil {
		return
	}
	s.idleTimer.Stop()
	s.attempt.stop()
	s.resp.Body.Close()
}
