package agentry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"
)

// ErrCutShort is wrapped by the [*ConnectionError] of an NDJSON answer (a user's export) whose body ended in the
// middle of a line: the service broke it off. Ask again.
var ErrCutShort = errors.New("the answer ended in the middle of a line")

// streamLines iterates over the items of an application/x-ndjson answer, one JSON value per line, read as the
// lines arrive. The request is sent when the loop starts; a failure before the answer starts is retried like any
// call's and then yielded. Once started, the answer is never retried: a failure (a broken connection, a body
// ending mid-line, the client's timeout passing in silence) is yielded once, as the last pair, after the items
// that arrived whole. Leaving the loop closes the connection.
func streamLines[T any](ctx context.Context, c *Client, req *request, opts []Option) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cfg, err := c.callConfig(opts)
		if err != nil {
			yield(zero, err)
			return
		}
		resp, a, err := c.openStream(ctx, cfg, req, mediaNDJSON)
		if err != nil {
			yield(zero, err)
			return
		}
		idle := time.AfterFunc(cfg.timeout, func() { a.cancel(errIdleTimeout) })
		defer func() {
			idle.Stop()
			a.stop()
			resp.Body.Close()
		}()
		reader := bufio.NewReader(&activityReader{r: resp.Body, onRead: func() { idle.Reset(cfg.timeout) }})
		for {
			line, readErr := reader.ReadBytes('\n')
			text := bytes.TrimSpace(line)
			if readErr != nil {
				switch {
				case errors.Is(readErr, io.EOF) && len(text) == 0:
					return
				case errors.Is(readErr, io.EOF):
					yield(zero, &ConnectionError{Message: "the answer was cut short", Err: ErrCutShort})
				default:
					yield(zero, linesFailure(a, cfg.timeout, readErr))
				}
				return
			}
			if len(text) == 0 {
				continue
			}
			// The silence timer runs only while waiting for the server, not while the loop body runs.
			idle.Stop()
			var item T
			if err := json.Unmarshal(text, &item); err != nil {
				yield(zero, &APIError{
					StatusCode: resp.StatusCode,
					Message:    fmt.Sprintf("a line of the answer is not the JSON expected: %v", err),
					RequestID:  resp.Header.Get("X-Request-Id"),
					Header:     resp.Header,
					Body:       text,
				})
				return
			}
			if !yield(item, nil) {
				return
			}
			idle.Reset(cfg.timeout)
		}
	}
}

// linesFailure turns an error reading an NDJSON answer into the error to yield.
func linesFailure(a *attempt, timeout time.Duration, err error) error {
	switch {
	case context.Cause(a.ctx) == errIdleTimeout:
		return &ConnectionError{Message: fmt.Sprintf("the answer sent nothing for %v", timeout), Timeout: true}
	case a.parent.Err() != nil:
		return canceled(a.parent)
	}
	return &ConnectionError{Message: "the answer broke off", Err: err}
}

// failedLines is an NDJSON answer whose request could not be made: it yields err.
func failedLines[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}
