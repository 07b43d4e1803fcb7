package agentry

import (
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retrySafety is how safe an operation is to send twice.
type retrySafety int

const (
	// retryIdempotent: GET, PATCH, DELETE. Sending again has the same effect (a repeated DELETE may answer 404).
	retryIdempotent retrySafety = iota
	// retryUnsafe: creating an agent or an API key. After a timeout or a 5xx the server may have created it,
	// and a retry could create a second one.
	retryUnsafe
	// retryMessage: sending a message. The exchange is stored only when the reply is complete, so a 503
	// (AGENT_UNAVAILABLE) left nothing behind; other failures after the request reached the server are final.
	retryMessage
)

// failureKind is what went wrong with one attempt.
type failureKind int

const (
	failureStatus failureKind = iota
	failureConnection
	failureTimeout
)

type attemptFailure struct {
	kind   failureKind
	status int
	code   ErrorCode
	// unsent: the connection was never established (refused, unknown host), so the server saw nothing.
	unsent bool
}

// shouldRetry says whether a failed attempt is worth retrying.
//
//   - 429 is always retried: the rate limiter refuses before the operation runs, so nothing happened.
//   - A connection that was never established is always retried, for the same reason.
//   - 408 means the server gave up waiting for the request, so it was not processed: always retried.
//   - 409 is retried except AGENT_INACTIVE, which only an update of the agent's status clears.
//   - Other connection failures, timeouts and 5xx are retried for idempotent operations only; for messages,
//     503 too.
func shouldRetry(f attemptFailure, safety retrySafety) bool {
	switch f.kind {
	case failureConnection:
		return f.unsent || safety == retryIdempotent
	case failureTimeout:
		return safety == retryIdempotent
	}
	if f.code == ErrorCodeAgentInactive || f.code == ErrorCodeInsufficientQuota {
		return false
	}
	switch {
	case f.status == http.StatusTooManyRequests || f.status == http.StatusRequestTimeout:
		return true
	case f.status == http.StatusConflict:
		return safety == retryIdempotent
	case f.status == http.StatusServiceUnavailable:
		return safety != retryUnsafe
	case f.status >= 500:
		return safety == retryIdempotent
	}
	return false
}

const (
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 8 * time.Second
)

// retryDelay is the wait before retry number retry (0 for the first). Retry-After wins when the server sent it;
// otherwise exponential backoff from 0.5 s to 8 s, less up to 25 % jitter so that clients refused together do
// not come back together. Either way the wait is capped at maxDelay: a wait cut short costs one more refused
// request, while a concurrency slot often frees before the server's estimate.
func retryDelay(retry int, retryAfter time.Duration, hasRetryAfter bool, maxDelay time.Duration, random func() float64) time.Duration {
	wanted := retryAfter
	if !hasRetryAfter {
		backoff := maxBackoff
		if retry < 5 {
			backoff = min(initialBackoff<<retry, maxBackoff)
		}
		wanted = time.Duration(float64(backoff) * (1 - 0.25*random()))
	}
	return max(0, min(wanted, maxDelay))
}

// parseRetryAfter reads Retry-After: a number of seconds or an HTTP date. Unparseable or negative values are
// ignored.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if value[0] >= '0' && value[0] <= '9' {
		seconds, err := strconv.ParseFloat(value, 64)
		if err != nil || seconds < 0 {
			return 0, false
		}
		return time.Duration(seconds * float64(time.Second)), true
	}
	date, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	seconds := math.Ceil(date.Sub(now).Seconds())
	return time.Duration(max(0, seconds)) * time.Second, true
}

// isUnsent says whether a transport error proves the request never left: the dial failed (refused, unknown
// host, unreachable network), so no connection carried it.
func isUnsent(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

func jitter() float64 { return rand.Float64() }

func headerInt(h http.Header, name string) (int, bool) {
	v, err := strconv.Atoi(strings.TrimSpace(h.Get(name)))
	return v, err == nil
}
