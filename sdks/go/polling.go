package agentry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The pauses of a wait for a background message (WaitForBackground): the first, and the longest, since each is
// twice the one before; and how long a wait lasts before it gives up.
const (
	DefaultPollInterval = 500 * time.Millisecond
	MaxPollInterval     = 5 * time.Second
	DefaultMaxWait      = 10 * time.Minute
)

// ErrOtherAnswerType is matched by the error of a method that reads one type of an answer that may be of several
// (GetBackground) when the answer is of another: read that one with the operation's main method (Get).
var ErrOtherAnswerType = errors.New("agentry: the answer is of another type")

// WithPollInterval sets the first pause of a wait (WaitForBackground) before it reads the answer again; each next
// pause is twice as long, at most MaxPollInterval or this one if longer. Default: DefaultPollInterval.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.problems = append(c.problems, fmt.Sprintf("WithPollInterval: %v is not positive", d))
			return
		}
		c.pollInterval = d
	}
}

// WithMaxWait sets how long a wait (WaitForBackground) lasts in all before it gives up with a [*ConnectionError]
// matching [ErrTimeout]. Default: DefaultMaxWait. A deadline on the call's context applies as well.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.problems = append(c.problems, fmt.Sprintf("WithMaxWait: %v is not positive", d))
			return
		}
		c.maxWait = d
	}
}

// decodeVariant decodes data as a T when it has the field marker, which the other types of the answer lack.
func decodeVariant[T any](data json.RawMessage, marker, mainMethod string) (*T, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields[marker] == nil {
		return nil, fmt.Errorf("%w: it has no %q; read it with %s", ErrOtherAnswerType, marker, mainMethod)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &APIError{StatusCode: 200, Message: fmt.Sprintf("the response is not the JSON expected: %v", err)}
	}
	return &out, nil
}

// pollUntilDone calls read until pending says no of its answer, pausing between reads as the options say.
func pollUntilDone[T any](ctx context.Context, c *Client, opts []Option, read func(context.Context) (T, error),
	pending func(T) bool) (T, error) {
	var zero T
	cfg, err := c.callConfig(opts)
	if err != nil {
		return zero, err
	}
	pause, maxWait := cfg.pollInterval, cfg.maxWait
	if pause == 0 {
		pause = DefaultPollInterval
	}
	if maxWait == 0 {
		maxWait = DefaultMaxWait
	}
	longest := max(MaxPollInterval, pause)
	deadline := time.Now().Add(maxWait)
	for {
		answer, err := read(ctx)
		if err != nil || !pending(answer) {
			return answer, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return zero, &ConnectionError{
				Message: fmt.Sprintf("still pending after %v; read it again later", maxWait),
				Timeout: true,
			}
		}
		timer := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return zero, canceled(ctx)
		case <-timer.C:
		}
		pause = min(pause*2, longest)
	}
}
