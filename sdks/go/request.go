package agentry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// request is one REST operation to perform.
type request struct {
	method string
	// path is relative to the base URL and already escaped, e.g. "/agents/agt_123".
	path  string
	query url.Values
	body  []byte
}

// errAttemptTimeout is the cancellation cause of an attempt that ran out of time.
var errAttemptTimeout = errors.New("attempt timed out")

// attempt holds one try of a request: its context, cancelled by the caller or by its timer.
type attempt struct {
	// parent is the caller's context.
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

func startAttempt(parent context.Context, timeout time.Duration) *attempt {
	ctx, cancel := context.WithCancelCause(parent)
	a := &attempt{parent: parent, ctx: ctx, cancel: cancel}
	a.timer = time.AfterFunc(timeout, func() { cancel(errAttemptTimeout) })
	return a
}

func (a *attempt) timedOut() bool { return context.Cause(a.ctx) == errAttemptTimeout }

// stop ends the attempt's timer and releases its context.
func (a *attempt) stop() {
	a.timer.Stop()
	a.cancel(context.Canceled)
}

// outcome of one attempt that failed in a way that may be retried.
type failed struct {
	err     error
	failure attemptFailure
	// retryAfter is the server's Retry-After, when it sent one.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// doJSON performs a JSON request with retries and decodes the success body into out.
func (c *Client) doJSON(ctx context.Context, req *request, opts []Option, out any) error {
	cfg, err := c.callConfig(opts)
	if err != nil {
		return err
	}
	if req, err = withBodyFields(req, cfg.bodyFields); err != nil {
		return err
	}
	cfg = withIdempotencyKey(cfg, req)
	return c.send(ctx, cfg, req, func(a *attempt) (bool, *failed, error) {
		resp, f, err := c.roundTrip(a, cfg, req, "application/json")
		if resp == nil {
			return false, f, err
		}
		body, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if readErr != nil {
			f, err := transportFailure(a, readErr)
			return false, f, err
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return false, statusFailure(resp, body), nil
		}
		a.stop()
		if err := json.Unmarshal(body, out); err != nil {
			return false, nil, &APIError{
				StatusCode: resp.StatusCode,
				Message:    fmt.Sprintf("the response is not the JSON expected: %v", err),
				RequestID:  resp.Header.Get("X-Request-Id"),
				Header:     resp.Header,
				Body:       body,
			}
		}
		return true, nil, nil
	})
}

// Media types of the answers read as they arrive.
const (
	mediaEventStream = "text/event-stream"
	mediaNDJSON      = "application/x-ndjson"
)

var mediaNames = map[string]string{mediaEventStream: "an event stream", mediaNDJSON: "NDJSON (application/x-ndjson)"}

// openStream sends a request for an answer read as it arrives (mediaType: text/event-stream or
// application/x-ndjson) and returns once the response has arrived and is of that type. Failures before that are
// retried like any request's; the body never is. The returned attempt's context governs the body: the caller
// cancels it with stop when done.
func (c *Client) openStream(ctx context.Context, cfg config, req *request, mediaType string) (*http.Response, *attempt, error) {
	req, err := withBodyFields(req, cfg.bodyFields)
	if err != nil {
		return nil, nil, err
	}
	cfg = withIdempotencyKey(cfg, req)
	var opened *http.Response
	var openedAttempt *attempt
	err = c.send(ctx, cfg, req, func(a *attempt) (bool, *failed, error) {
		resp, f, err := c.roundTrip(a, cfg, req, mediaType)
		if resp == nil {
			return false, f, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 && hasMediaType(resp.Header, mediaType) {
			// From here the stream's own silence timer applies.
			if !a.timer.Stop() {
				resp.Body.Close()
				f, err := transportFailure(a, errAttemptTimeout)
				return false, f, err
			}
			opened, openedAttempt = resp, a
			return true, nil, nil
		}
		body, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if readErr != nil {
			f, err := transportFailure(a, readErr)
			return false, f, err
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return false, statusFailure(resp, body), nil
		}
		return false, nil, &APIError{
			StatusCode: resp.StatusCode,
			Message:    fmt.Sprintf("expected %s, got %q", mediaNames[mediaType], resp.Header.Get("Content-Type")),
			RequestID:  resp.Header.Get("X-Request-Id"),
			Header:     resp.Header,
			Body:       body,
		}
	})
	return opened, openedAttempt, err
}

// send runs attempts until one succeeds, one fails for good, or the retries are spent. An attempt returns
// (true, nil, nil) on success, a *failed that may be retried, or a final error. The attempt of a success is
// left running (a stream reads its body under it); any other is stopped here.
func (c *Client) send(ctx context.Context, cfg config, req *request,
	try func(*attempt) (bool, *failed, error)) error {
	for retry := 0; ; retry++ {
		if err := ctx.Err(); err != nil {
			return canceled(ctx)
		}
		a := startAttempt(ctx, cfg.timeout)
		ok, f, err := try(a)
		if ok {
			return nil
		}
		a.stop()
		if err != nil {
			return err
		}
		if retry >= cfg.maxRetries || !shouldRetry(f.failure) {
			return f.err
		}
		wait := retryDelay(retry, f.retryAfter, f.hasRetryAfter, cfg.maxRetryDelay, jitter)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return canceled(ctx)
		case <-timer.C:
		}
	}
}

// withIdempotencyKey gives a write the Idempotency-Key all of its attempts carry: the caller's
// (WithIdempotencyKey), or a new random one. A read carries none.
func withIdempotencyKey(cfg config, req *request) config {
	if !takesIdempotencyKey(req.method) {
		cfg.idempotencyKey = ""
	} else if cfg.idempotencyKey == "" {
		cfg.idempotencyKey = newIdempotencyKey()
	}
	return cfg
}

// roundTrip sends one attempt and returns its response, or how it failed.
func (c *Client) roundTrip(a *attempt, cfg config, req *request, accept string) (*http.Response, *failed, error) {
	target := cfg.baseURL + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	httpReq, err := http.NewRequestWithContext(a.ctx, req.method, target, body)
	if err != nil {
		return nil, nil, fmt.Errorf("agentry: %w", err)
	}
	httpReq.Header.Set("Accept", accept)
	httpReq.Header.Set("Authorization", "Bearer "+cfg.apiKey)
	httpReq.Header.Set("User-Agent", "agentry-go/"+Version)
	if req.body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	if cfg.idempotencyKey != "" {
		httpReq.Header.Set("Idempotency-Key", cfg.idempotencyKey)
	}
	for name, values := range cfg.headers {
		httpReq.Header[name] = values
	}
	resp, err := cfg.httpClient.Do(httpReq)
	if err != nil {
		f, final := transportFailure(a, err)
		return nil, f, final
	}
	c.recordRateLimit(resp.Header)
	return resp, nil, nil
}

// transportFailure classifies an error of the transport or of reading a body: the caller's cancellation (final),
// the attempt's timeout, or the connection.
func transportFailure(a *attempt, err error) (*failed, error) {
	timedOut := a.timedOut() || errors.Is(err, errAttemptTimeout)
	if !timedOut && a.parent.Err() != nil {
		return nil, canceled(a.parent)
	}
	if timedOut {
		return &failed{
			err:     &ConnectionError{Message: "request timed out", Timeout: true},
			failure: attemptFailure{kind: failureTimeout},
		}, nil
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	return &failed{
		err:     &ConnectionError{Message: "connection error", Err: err},
		failure: attemptFailure{kind: failureConnection},
	}, nil
}

func statusFailure(resp *http.Response, body []byte) *failed {
	apiErr := errorFromResponse(resp.StatusCode, resp.Header, body)
	return &failed{
		err:           apiErr,
		failure:       attemptFailure{kind: failureStatus, status: resp.StatusCode, code: apiErr.Code},
		retryAfter:    apiErr.RetryAfter,
		hasRetryAfter: apiErr.hasRetryAfter,
	}
}

// canceled is the error of a call whose context ended: it matches context.Canceled or
// context.DeadlineExceeded with errors.Is.
func canceled(ctx context.Context) error {
	return fmt.Errorf("agentry: %w", ctx.Err())
}

func hasMediaType(h http.Header, want string) bool {
	mediaType, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && strings.EqualFold(mediaType, want)
}

// commaSeparated is a list query parameter's value: its items joined with commas.
func commaSeparated[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	return strings.Join(parts, ",")
}

// pathSegment is an id as one escaped URL path segment; an empty id is refused rather than turned into
// another route.
func pathSegment(name, value string) (string, error) {
	if value == "" {
		return "", fmt.Errorf("agentry: %s must not be empty", name)
	}
	return url.PathEscape(value), nil
}

// marshalBody encodes a request body. extra adds fields the SDK sets itself (a stream's "stream": true).
func marshalBody(body any, extra ...any) ([]byte, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("agentry: encoding the request: %w", err)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		data, err = appendField(data, extra[i].(string), extra[i+1])
		if err != nil {
			return nil, fmt.Errorf("agentry: encoding the request: %w", err)
		}
	}
	return data, nil
}

// appendField adds "name": value to an encoded JSON object.
func appendField(object []byte, name string, value any) ([]byte, error) {
	object = bytes.TrimSpace(object)
	if len(object) < 2 || object[0] != '{' || object[len(object)-1] != '}' {
		return nil, errors.New("not a JSON object")
	}
	key, _ := json.Marshal(name)
	encoded, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, object[:len(object)-1]...)
	if len(bytes.TrimSpace(object[1:len(object)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, encoded...)
	return append(out, '}'), nil
}

// withBodyFields returns req with the fields of WithBodyField set in its body.
func withBodyFields(req *request, fields map[string]any) (*request, error) {
	if len(fields) == 0 || req.body == nil {
		return req, nil
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(req.body, &body); err != nil {
		return nil, fmt.Errorf("agentry: encoding the request: %w", err)
	}
	for name, value := range fields {
		encoded, err := json.Marshal(value)
		if err != nil {
			return nil, fmt.Errorf("agentry: encoding the request field %q: %w", name, err)
		}
		body[name] = encoded
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("agentry: encoding the request: %w", err)
	}
	changed := *req
	changed.body = data
	return &changed, nil
}
