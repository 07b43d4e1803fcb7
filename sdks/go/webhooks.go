package agentry

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a delivery's webhook-timestamp may be from the receiver's clock, either
// way, by default.
const DefaultWebhookTolerance = 5 * time.Minute

// ErrWebhookVerification is matched (errors.Is) by every [*WebhookVerificationError]: the delivery did not
// verify; answer it with a 4xx and do not act on it.
var ErrWebhookVerification = errors.New("agentry: webhook verification failed")

// WebhookFailure says why a delivery did not verify.
type WebhookFailure string

// The reasons of a [*WebhookVerificationError].
const (
	// WebhookMissingHeaders: webhook-id, webhook-timestamp or webhook-signature is absent or empty.
	WebhookMissingHeaders WebhookFailure = "missing_headers"
	// WebhookInvalidTimestamp: webhook-timestamp is not Unix seconds.
	WebhookInvalidTimestamp WebhookFailure = "invalid_timestamp"
	// WebhookTimestampTooOld: older than the tolerance allows; a replay, or a clock far off.
	WebhookTimestampTooOld WebhookFailure = "timestamp_too_old"
	// WebhookTimestampTooNew: further in the future than the tolerance allows.
	WebhookTimestampTooNew WebhookFailure = "timestamp_too_new"
	// WebhookNoSignature: webhook-signature holds no v1 signature in a readable form.
	WebhookNoSignature WebhookFailure = "no_signature"
	// WebhookSignatureMismatch: no signature matches: a wrong secret, or a body changed on the way or
	// re-serialized.
	WebhookSignatureMismatch WebhookFailure = "signature_mismatch"
	// WebhookInvalidPayload: the delivery is signed, but its body is not an event (UnwrapWebhook only).
	WebhookInvalidPayload WebhookFailure = "invalid_payload"
)

// WebhookVerificationError is a delivery that did not verify. It matches [ErrWebhookVerification]; Reason says
// why.
type WebhookVerificationError struct {
	// Reason is why, e.g. WebhookSignatureMismatch.
	Reason WebhookFailure
	// Message says it for a person.
	Message string
	// Err is the underlying error, if any (a JSON error for WebhookInvalidPayload).
	Err error
}

func (e *WebhookVerificationError) Error() string {
	return "agentry: webhook verification failed: " + e.Message
}

// Is reports whether target is ErrWebhookVerification.
func (e *WebhookVerificationError) Is(target error) bool { return target == ErrWebhookVerification }

// Unwrap returns the underlying error.
func (e *WebhookVerificationError) Unwrap() error { return e.Err }

// WebhookOption changes how VerifyWebhook and UnwrapWebhook check a delivery.
type WebhookOption func(*webhookConfig)

type webhookConfig struct {
	tolerance time.Duration
	now       func() time.Time
	problems  []string
}

// WithWebhookTolerance sets how far webhook-timestamp may be from now, either way. Default:
// DefaultWebhookTolerance (5 minutes).
func WithWebhookTolerance(d time.Duration) WebhookOption {
	return func(c *webhookConfig) {
		if d < 0 {
			c.problems = append(c.problems, fmt.Sprintf("WithWebhookTolerance: %v is negative", d))
			return
		}
		c.tolerance = d
	}
}

// WithWebhookClock sets the clock the timestamp is checked against, for tests. Default: time.Now.
func WithWebhookClock(now func() time.Time) WebhookOption {
	return func(c *webhookConfig) {
		if now == nil {
			c.problems = append(c.problems, "WithWebhookClock: the clock is nil")
			return
		}
		c.now = now
	}
}

// VerifyWebhook checks that a delivery was signed with secret (the endpoint's whsec_... secret, with or
// without the prefix) and is recent. It needs no client or API key:
//
//	body, err := io.ReadAll(r.Body)
//	if err := agentry.VerifyWebhook(body, r.Header, secret); err != nil { ... }
//
// payload is the body exactly as received, not JSON decoded and encoded again. Of the signatures in
// webhook-signature (several while a secret is being rotated), one v1 signature matching is enough; other
// versions are ignored. Signatures are compared in constant time. Header names are matched in any case.
//
// A delivery that does not verify returns a [*WebhookVerificationError] (errors.Is(err,
// ErrWebhookVerification)); a secret that is not a whsec_ secret, or an invalid option, returns another error.
func VerifyWebhook(payload []byte, header http.Header, secret string, opts ...WebhookOption) error {
	cfg := webhookConfig{tolerance: DefaultWebhookTolerance, now: time.Now}
	for _, opt := range opts {
		opt(&cfg)
	}
	if len(cfg.problems) > 0 {
		return errors.New("agentry: " + strings.Join(cfg.problems, "; "))
	}
	key, err := webhookKey(secret)
	if err != nil {
		return err
	}
	id := headerValue(header, "webhook-id")
	timestamp := headerValue(header, "webhook-timestamp")
	signatures := headerValue(header, "webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		var missing []string
		headers := [][2]string{{"webhook-id", id}, {"webhook-timestamp", timestamp}, {"webhook-signature", signatures}}
		for _, h := range headers {
			if h[1] == "" {
				missing = append(missing, h[0])
			}
		}
		return verificationError(WebhookMissingHeaders, "missing header "+strings.Join(missing, ", "))
	}
	if err := checkWebhookTimestamp(timestamp, cfg.tolerance, cfg.now()); err != nil {
		return err
	}

	expected := webhookMAC(key, id, timestamp, payload)
	candidates := 0
	for _, token := range strings.Split(signatures, " ") {
		// Several header lines joined by a proxy come as "v1,a, v1,b".
		version, encoded, ok := strings.Cut(strings.TrimSuffix(token, ","), ",")
		if !ok || version != "v1" {
			continue
		}
		signature, ok := decodeBase64(encoded)
		if !ok {
			continue
		}
		candidates++
		if hmac.Equal(signature, expected) {
			return nil
		}
	}
	if candidates == 0 {
		return verificationError(WebhookNoSignature, "the webhook-signature header holds no v1 signature")
	}
	return verificationError(WebhookSignatureMismatch,
		"no signature matches: check the secret, and verify the raw body as received")
}

// UnwrapWebhook verifies a delivery (as VerifyWebhook does) and returns its event; tell the events apart
// with a type switch:
//
//	event, err := agentry.UnwrapWebhook(body, r.Header, secret)
//	if err != nil { ... }
//	switch e := event.(type) {
//	case *agentry.MessageCompletedWebhookEvent:
//		fmt.Println(e.Data.AgentID, e.Data.Text)
//	case *agentry.AgentStatusChangedWebhookEvent:
//		fmt.Println(e.Data.ID, e.Data.Status)
//	}
//
// An event of a type newer than this SDK comes as an [*UnknownWebhookEvent]. A signed body that is not an
// event is a [*WebhookVerificationError] with Reason WebhookInvalidPayload.
func UnwrapWebhook(payload []byte, header http.Header, secret string, opts ...WebhookOption) (WebhookEvent, error) {
	if err := VerifyWebhook(payload, header, secret, opts...); err != nil {
		return nil, err
	}
	event, err := decodeWebhookEvent(payload)
	if err != nil {
		return nil, &WebhookVerificationError{
			Reason: WebhookInvalidPayload, Message: "the body is not an event: " + err.Error(), Err: err,
		}
	}
	return event, nil
}

// SignWebhook signs a payload as the service does and returns the headers of such a delivery, to test a
// receiver without a running service. id is the webhook-id (the event's id).
func SignWebhook(payload []byte, secret, id string, timestamp time.Time) (http.Header, error) {
	if id == "" {
		return nil, errors.New("agentry: a webhook id is required to sign")
	}
	key, err := webhookKey(secret)
	if err != nil {
		return nil, err
	}
	seconds := strconv.FormatInt(timestamp.Unix(), 10)
	header := http.Header{}
	header.Set("webhook-id", id)
	header.Set("webhook-timestamp", seconds)
	header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(webhookMAC(key, id, seconds, payload)))
	return header, nil
}

// WebhookService is client.Webhooks: VerifyWebhook, UnwrapWebhook and SignWebhook on a client. The functions
// themselves need no client, nor an API key.
type WebhookService struct{}

// Verify is [VerifyWebhook].
func (*WebhookService) Verify(payload []byte, header http.Header, secret string, opts ...WebhookOption) error {
	return VerifyWebhook(payload, header, secret, opts...)
}

// Unwrap is [UnwrapWebhook].
func (*WebhookService) Unwrap(
	payload []byte, header http.Header, secret string, opts ...WebhookOption,
) (WebhookEvent, error) {
	return UnwrapWebhook(payload, header, secret, opts...)
}

// Sign is [SignWebhook].
func (*WebhookService) Sign(payload []byte, secret, id string, timestamp time.Time) (http.Header, error) {
	return SignWebhook(payload, secret, id, timestamp)
}

var timestampPattern = regexp.MustCompile(`^[0-9]{1,15}$`)

func verificationError(reason WebhookFailure, message string) error {
	return &WebhookVerificationError{Reason: reason, Message: message}
}

func webhookKey(secret string) ([]byte, error) {
	key, ok := decodeBase64(strings.TrimPrefix(secret, "whsec_"))
	if !ok || len(key) == 0 {
		return nil, errors.New("agentry: the webhook secret must be the endpoint's secret: whsec_ followed by base64")
	}
	return key, nil
}

// decodeBase64 reads standard base64, padded or not.
func decodeBase64(text string) ([]byte, bool) {
	if text == "" || strings.ContainsAny(text, "\r\n") {
		return nil, false
	}
	bytes, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(text, "="))
	return bytes, err == nil
}

func webhookMAC(key []byte, id, timestamp string, payload []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(payload)
	return mac.Sum(nil)
}

// headerValue reads a header whatever the case of its key (a map built by hand may not be canonical); several
// values are joined with spaces.
func headerValue(header http.Header, name string) string {
	var values []string
	for key, vs := range header {
		if strings.EqualFold(key, name) {
			values = append(values, vs...)
		}
	}
	return strings.TrimSpace(strings.Join(values, " "))
}

func checkWebhookTimestamp(header string, tolerance time.Duration, now time.Time) error {
	if !timestampPattern.MatchString(header) {
		return verificationError(WebhookInvalidTimestamp, "webhook-timestamp is not a Unix time in seconds")
	}
	seconds, _ := strconv.ParseInt(header, 10, 64)
	age := now.Sub(time.Unix(seconds, 0))
	if age > tolerance {
		return verificationError(WebhookTimestampTooOld, "the timestamp is too old")
	}
	if age < -tolerance {
		return verificationError(WebhookTimestampTooNew, "the timestamp is too far in the future")
	}
	return nil
}
