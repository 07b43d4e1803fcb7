package agentry

import (
	cryptorand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
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
}

// shouldRetry says whether a failed attempt is worth retrying. Every call may be sent again: a read changes
// nothing, and every write carries an Idempotency-Key, the same on each of its attempts, so the service runs it
// once and answers a repeat with the first answer.
//
//   - Connection failures and timeouts are retried: the request may not have arrived, and if it did, the retry
//     gets its answer.
//   - 408, 429 (the rate limiter refuses before the operation runs) and 5xx are retried.
//   - 409 is retried (IDEMPOTENCY_KEY_IN_USE: the first attempt still runs; its Retry-After says when to come
//     back), except AGENT_INACTIVE, which only an update of the agent's status clears.
//   - Other 4xx are final: INSUFFICIENT_QUOTA, and IDEMPOTENCY_KEY_REUSED (a key given with another request).
func shouldRetry(f attemptFailure) bool {
	if f.kind != failureStatus {
		return true
	}
	if f.code == ErrorCodeAgentInactive || f.code == ErrorCodeInsufficientQuota {
		return false
	}
	switch {
	case f.status == http.StatusRequestTimeout, f.status == http.StatusConflict,
		f.status == http.StatusTooManyRequests, f.status >= 500:
		return true
	}
	return false
}

// takesIdempotencyKey says whether requests of this method carry an Idempotency-Key: every one but a read.
func takesIdempotencyKey(method string) bool {
	return method != http.MethodGet
}

// newIdempotencyKey returns a random version 4 UUID.
func newIdempotencyKey() string {
	var b [16]byte
	if _, err := cryptorand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the platforms Go supports; a key must still be unique.
		panic(fmt.Sprintf("agentry: no randomness for an Idempotency-Key: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
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

func jitter() float64 { return rand.Float64() }

func headerInt(h http.Header, name string) (int, bool) {
	v, err := strconv.Atoi(strings.TrimSpace(h.Get(name)))
	return v, err == nil
}
