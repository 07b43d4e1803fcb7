package agentry

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The families of API errors, by HTTP status. An [*APIError] matches its family with errors.Is:
//
//	if errors.Is(err, agentry.ErrNotFound) { ... }
//
// The error's Code (AGENT_NOT_FOUND, INSUFFICIENT_QUOTA, ...) is the finer distinction.
var (
	// ErrBadRequest is 400 INVALID_REQUEST, and the other statuses that mean "this request, as sent, will never
	// succeed": 405 METHOD_NOT_ALLOWED, 413 PAYLOAD_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE, 422. Details names
	// the fields at fault.
	ErrBadRequest = errors.New("agentry: bad request")
	// ErrAuthentication is 401 UNAUTHORIZED: the API key is missing, malformed, unknown, revoked or expired.
	ErrAuthentication = errors.New("agentry: authentication failed")
	// ErrPermissionDenied is 403: FORBIDDEN (the key lacks the scope) or INSUFFICIENT_QUOTA (the account holds
	// its maximum number of agents; retrying will not help).
	ErrPermissionDenied = errors.New("agentry: permission denied")
	// ErrNotFound is 404: AGENT_NOT_FOUND, or NOT_FOUND for an unknown route or API key.
	ErrNotFound = errors.New("agentry: not found")
	// ErrConflict is 409: AGENT_INACTIVE, a message to an inactive agent. Activate the agent first. Also 412
	// PRECONDITION_FAILED: a WithIfMatch update or delete of an agent that changed since; read it again.
	ErrConflict = errors.New("agentry: conflict")
	// ErrRateLimit is 429 RATE_LIMIT_EXCEEDED: a rate or concurrency limit; RetryAfter says when to try again.
	ErrRateLimit = errors.New("agentry: rate limit exceeded")
	// ErrInternalServer is 500 and above: INTERNAL_ERROR (500), MODEL_ERROR (502, the model provider refused
	// or failed), AGENT_UNAVAILABLE (503, try again shortly).
	ErrInternalServer = errors.New("agentry: server error")
	// ErrTimeout is matched by a [*ConnectionError] whose attempt timed out.
	ErrTimeout = errors.New("agentry: timeout")
)

// APIError is a response of the API that reports a failure, or a stream's error event. Use errors.As to read
// it and errors.Is with ErrNotFound, ErrRateLimit, ... to tell the status family.
type APIError struct {
	// StatusCode is the HTTP status. For a stream's error event, the status its code travels with.
	StatusCode int
	// Code is the API's error code, e.g. ErrorCodeRateLimitExceeded; empty when the response had none.
	Code ErrorCode
	// Message is the server's explanation, for a person.
	Message string
	// RequestID is the request's id (X-Request-Id), to quote when reporting a problem.
	RequestID string
	// Details lists the fields at fault of an invalid request, e.g. {Field: "bio[2]", Issue: "must not be empty"}.
	Details []FieldIssue
	// RetryAfter is how long the server asked to wait before retrying (Retry-After); zero when it did not say.
	RetryAfter time.Duration
	// Header holds the response's headers.
	Header http.Header
	// Body is the response body as received.
	Body []byte

	hasRetryAfter bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agentry: %d", e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	return b.String()
}

// Is reports whether target is the error's status family (ErrNotFound, ErrRateLimit, ...).
func (e *APIError) Is(target error) bool {
	family := statusFamily(e.StatusCode)
	return family != nil && target == family
}

// RetryAfterSet reports whether the server sent Retry-After (RetryAfter may then be zero: retry at once).
func (e *APIError) RetryAfterSet() bool { return e.hasRetryAfter }

// statusFamily is the sentinel an HTTP status belongs to, or nil for a status outside every family.
func statusFamily(status int) error {
	switch {
	case status == 400 || status == 405 || status == 413 || status == 415 || status == 422:
		return ErrBadRequest
	case status == 401:
		return ErrAuthentication
	case status == 403:
		return ErrPermissionDenied
	case status == 404:
		return ErrNotFound
	case status == 409 || status == 412:
		return ErrConflict
	case status == 429:
		return ErrRateLimit
	case status >= 500:
		return ErrInternalServer
	}
	return nil
}

// ConnectionError means no response arrived: the service could not be reached, the connection broke, the
// attempt timed out (Timeout; it then matches ErrTimeout), or a stream ended before its reply was complete.
type ConnectionError struct {
	// Message says what happened.
	Message string
	// Timeout is true when no response, or for a stream no data, arrived within the client's timeout.
	Timeout bool
	// Err is the underlying error, if any.
	Err error
}

func (e *ConnectionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("agentry: %s: %v", e.Message, e.Err)
	}
	return "agentry: " + e.Message
}

// Unwrap returns the underlying error.
func (e *ConnectionError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTimeout and the attempt timed out.
func (e *ConnectionError) Is(target error) bool { return target == ErrTimeout && e.Timeout }

// errorEnvelope is the body of every error response.
type errorEnvelope struct {
	Error *struct {
		Code      ErrorCode    `json:"code"`
		Message   string       `json:"message"`
		Details   []FieldIssue `json:"details"`
		RequestID string       `json:"requestId"`
	} `json:"error"`
}

// errorFromResponse builds the error of a failed response from its status, headers and (possibly non-JSON) body.
func errorFromResponse(status int, header http.Header, body []byte) *APIError {
	e := &APIError{StatusCode: status, Header: header, Body: body, RequestID: header.Get("X-Request-Id")}
	e.RetryAfter, e.hasRetryAfter = parseRetryAfter(header.Get("Retry-After"), time.Now())
	var envelope errorEnvelope
	if json.Unmarshal(body, &envelope) == nil && envelope.Error != nil {
		e.Code = envelope.Error.Code
		e.Message = envelope.Error.Message
		e.Details = envelope.Error.Details
		if envelope.Error.RequestID != "" {
			e.RequestID = envelope.Error.RequestID
		}
	}
	if e.Message == "" {
		text := strings.TrimSpace(string(body))
		if len(text) > 500 {
			text = text[:500]
		}
		if text == "" {
			text = http.StatusText(status)
		}
		e.Message = text
	}
	return e
}

// errorFromStreamEvent builds the error of a stream's error event: the status its code travels with, as if the
// failure had come before the stream started.
func errorFromStreamEvent(data []byte, header http.Header) *APIError {
	var event StreamError
	_ = json.Unmarshal(data, &event)
	if event.Code == "" {
		event.Code = ErrorCodeInternalError
	}
	if event.Message == "" {
		event.Message = "the stream failed"
	}
	status, ok := errorCodeStatus(event.Code)
	if !ok {
		status = http.StatusInternalServerError
	}
	return &APIError{
		StatusCode: status,
		Code:       event.Code,
		Message:    event.Message,
		RequestID:  header.Get("X-Request-Id"),
		Header:     header,
		Body:       data,
	}
}
