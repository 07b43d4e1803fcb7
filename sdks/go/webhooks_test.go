package agentry_test

// Webhook verification, checked against the Standard Webhooks reference module
// (github.com/standard-webhooks/standard-webhooks/libraries/go, a test-only requirement): it signs what we
// verify and verifies what we sign.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const webhookEventID = "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1"

var webhookNow = time.Date(2026, 11, 20, 9, 30, 5, 0, time.UTC)

var webhookBody = []byte(`{"id":"` + webhookEventID + `","type":"agent.created","createdAt":"2026-11-20T09:30:00.000Z",` +
	`"data":` + strings.ReplaceAll(agentJSON, "\n", "") + `}`)

func newWebhookSecret(t *testing.T) string {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

func referenceWebhook(t *testing.T, secret string) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

// signedHeader is the headers of a delivery of body at the time given, signed by the reference module.
func signedHeader(t *testing.T, secret string, body []byte, at time.Time) http.Header {
	t.Helper()
	signature, err := referenceWebhook(t, secret).Sign(webhookEventID, at, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", webhookEventID)
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	h.Set("webhook-signature", signature)
	return h
}

func withSignature(h http.Header, signature string) http.Header {
	h = h.Clone()
	h.Set("webhook-signature", signature)
	return h
}

var atNow = agentry.WithWebhookClock(func() time.Time { return webhookNow })

// expectFailure fails the test unless err is a verification error for this reason.
func expectFailure(t *testing.T, what string, err error, want agentry.WebhookFailure) {
	t.Helper()
	if got := failure(t, err); got != want {
		t.Errorf("%s: %s, want %s", what, got, want)
	}
}

// failure is the reason of a verification error, failing the test for any other result.
func failure(t *testing.T, err error) agentry.WebhookFailure {
	t.Helper()
	var verr *agentry.WebhookVerificationError
	if !errors.As(err, &verr) || !errors.Is(err, agentry.ErrWebhookVerification) {
		t.Fatalf("want a *WebhookVerificationError, got %v", err)
	}
	return verr.Reason
}

func TestVerifyWebhookAcceptsTheReferenceSignature(t *testing.T) {
	secret := newWebhookSecret(t)
	h := signedHeader(t, secret, webhookBody, webhookNow)
	if err := agentry.VerifyWebhook(webhookBody, h, secret, atNow); err != nil {
		t.Fatal(err)
	}
	// Without the prefix, and with header keys that are not canonical (a map built by hand).
	lower := http.Header{}
	for name, values := range h {
		lower[strings.ToLower(name)] = values
	}
	if err := agentry.VerifyWebhook(webhookBody, lower, strings.TrimPrefix(secret, "whsec_"), atNow); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyWebhookRefusesTamperedBodiesAndOtherSecrets(t *testing.T) {
	secret := newWebhookSecret(t)
	h := signedHeader(t, secret, webhookBody, webhookNow)
	tampered := []byte(strings.Replace(string(webhookBody), "Ada", "Eve", 1))
	expectFailure(t, "tampered", agentry.VerifyWebhook(tampered, h, secret, atNow), agentry.WebhookSignatureMismatch)
	var decoded any
	_ = json.Unmarshal(webhookBody, &decoded)
	reencoded, _ := json.MarshalIndent(decoded, "", "  ")
	expectFailure(t, "re-encoded", agentry.VerifyWebhook(reencoded, h, secret, atNow), agentry.WebhookSignatureMismatch)
	other := newWebhookSecret(t)
	expectFailure(t, "other secret", agentry.VerifyWebhook(webhookBody, h, other, atNow), agentry.WebhookSignatureMismatch)
}

func TestVerifyWebhookRefusesMissingHeaders(t *testing.T) {
	secret := newWebhookSecret(t)
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		h := signedHeader(t, secret, webhookBody, webhookNow)
		h.Del(name)
		expectFailure(t, "%s missing", agentry.VerifyWebhook(webhookBody, h, secret, atNow), agentry.WebhookMissingHeaders)
		h.Set(name, "")
		expectFailure(t, "%s empty", agentry.VerifyWebhook(webhookBody, h, secret, atNow), agentry.WebhookMissingHeaders)
	}
	err := agentry.VerifyWebhook(webhookBody, http.Header{}, secret, atNow)
	if got := failure(t, err); got != agentry.WebhookMissingHeaders || !strings.Contains(err.Error(), "webhook-signature") {
		t.Errorf("no headers: %v", err)
	}
}

func TestVerifyWebhookChecksTheTimestamp(t *testing.T) {
	secret := newWebhookSecret(t)
	at := func(seconds int) http.Header {
		return signedHeader(t, secret, webhookBody, webhookNow.Add(time.Duration(seconds)*time.Second))
	}
	for _, seconds := range []int{-300, 0, 300} {
		if err := agentry.VerifyWebhook(webhookBody, at(seconds), secret, atNow); err != nil {
			t.Errorf("%d s: %v", seconds, err)
		}
	}
	expectFailure(t, "-301 s", agentry.VerifyWebhook(webhookBody, at(-301), secret, atNow), agentry.WebhookTimestampTooOld)
	expectFailure(t, "+301 s", agentry.VerifyWebhook(webhookBody, at(301), secret, atNow), agentry.WebhookTimestampTooNew)
	if err := agentry.VerifyWebhook(webhookBody, at(-3600), secret, atNow, agentry.WithWebhookTolerance(2*time.Hour)); err != nil {
		t.Errorf("a wider tolerance: %v", err)
	}
	err := agentry.VerifyWebhook(webhookBody, at(-60), secret, atNow, agentry.WithWebhookTolerance(30*time.Second))
	expectFailure(t, "a narrower tolerance", err, agentry.WebhookTimestampTooOld)
	// The real clock by default.
	if err := agentry.VerifyWebhook(webhookBody, signedHeader(t, secret, webhookBody, time.Now()), secret); err != nil {
		t.Errorf("now: %v", err)
	}
	expectFailure(t, "the real clock", agentry.VerifyWebhook(webhookBody, at(0), secret), agentry.WebhookTimestampTooOld)
	for _, value := range []string{"soon", "1.5e9", "-1", "2026-11-20T09:30:05Z", "1 2"} {
		h := at(0)
		h.Set("webhook-timestamp", value)
		expectFailure(t, "%q", agentry.VerifyWebhook(webhookBody, h, secret, atNow), agentry.WebhookInvalidTimestamp)
	}
}

func TestVerifyWebhookDuringARotation(t *testing.T) {
	secret := newWebhookSecret(t)
	h := signedHeader(t, secret, webhookBody, webhookNow)
	current := h.Get("webhook-signature")
	stale := signedHeader(t, newWebhookSecret(t), webhookBody, webhookNow).Get("webhook-signature")
	for _, signatures := range []string{stale + " " + current, current + " " + stale, stale + ", " + current} {
		if err := agentry.VerifyWebhook(webhookBody, withSignature(h, signatures), secret, atNow); err != nil {
			t.Errorf("%q: %v", signatures, err)
		}
	}
	// Two header lines, as a server may receive them.
	lines := h.Clone()
	lines["Webhook-Signature"] = []string{stale, current}
	if err := agentry.VerifyWebhook(webhookBody, lines, secret, atNow); err != nil {
		t.Errorf("two lines: %v", err)
	}
	err := agentry.VerifyWebhook(webhookBody, withSignature(h, stale+" "+stale), secret, atNow)
	expectFailure(t, "none matching", err, agentry.WebhookSignatureMismatch)
}

func TestVerifyWebhookIgnoresOtherVersionsAndUnreadableSignatures(t *testing.T) {
	secret := newWebhookSecret(t)
	h := signedHeader(t, secret, webhookBody, webhookNow)
	v1 := h.Get("webhook-signature")
	v2 := "v2," + strings.TrimPrefix(v1, "v1,")
	expectFailure(t, "v2 only", agentry.VerifyWebhook(webhookBody, withSignature(h, v2), secret, atNow), agentry.WebhookNoSignature)
	if err := agentry.VerifyWebhook(webhookBody, withSignature(h, v2+" "+v1), secret, atNow); err != nil {
		t.Errorf("v2 then v1: %v", err)
	}
	for _, junk := range []string{"v1", "v1,", "v1,!!!", "garbage", strings.TrimPrefix(v1, "v1,")} {
		err := agentry.VerifyWebhook(webhookBody, withSignature(h, junk), secret, atNow)
		expectFailure(t, "%q", err, agentry.WebhookNoSignature)
		if err := agentry.VerifyWebhook(webhookBody, withSignature(h, junk+" "+v1), secret, atNow); err != nil {
			t.Errorf("%q then v1: %v", junk, err)
		}
	}
}

func TestVerifyWebhookReportsUsageErrorsApart(t *testing.T) {
	secret := newWebhookSecret(t)
	h := signedHeader(t, secret, webhookBody, webhookNow)
	for _, bad := range []string{"", "whsec_", "whsec_not base64!"} {
		err := agentry.VerifyWebhook(webhookBody, h, bad, atNow)
		if err == nil || errors.Is(err, agentry.ErrWebhookVerification) {
			t.Errorf("secret %q: %v", bad, err)
		}
	}
	for _, opt := range []agentry.WebhookOption{agentry.WithWebhookTolerance(-time.Second), agentry.WithWebhookClock(nil)} {
		err := agentry.VerifyWebhook(webhookBody, h, secret, opt)
		if err == nil || errors.Is(err, agentry.ErrWebhookVerification) {
			t.Errorf("invalid option: %v", err)
		}
	}
}

func TestSignWebhookIsVerifiedByTheReference(t *testing.T) {
	secret := newWebhookSecret(t)
	h, err := agentry.SignWebhook(webhookBody, secret, webhookEventID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := referenceWebhook(t, secret).Verify(webhookBody, h); err != nil {
		t.Fatalf("the reference refuses our signature: %v", err)
	}
	// The same bytes as the reference for the same id, time and body.
	h, _ = agentry.SignWebhook(webhookBody, strings.TrimPrefix(secret, "whsec_"), webhookEventID, webhookNow)
	want := signedHeader(t, secret, webhookBody, webhookNow)
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		if h.Get(name) != want.Get(name) {
			t.Errorf("%s: %q, want %q", name, h.Get(name), want.Get(name))
		}
	}
	if _, err := agentry.SignWebhook(webhookBody, secret, "", webhookNow); err == nil {
		t.Error("signed without an id")
	}
}

// deliver is the event UnwrapWebhook returns for a delivery of this type and data.
func deliver(t *testing.T, secret, kind, data string) agentry.WebhookEvent {
	t.Helper()
	body := []byte(`{"id":"` + webhookEventID + `","type":"` + kind + `","createdAt":"2026-11-20T09:30:05Z","data":` + data + `}`)
	event, err := agentry.UnwrapWebhook(body, signedHeader(t, secret, body, webhookNow), secret, atNow)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	if event.EventID() != webhookEventID {
		t.Errorf("%s: id %q", kind, event.EventID())
	}
	return event
}

func TestUnwrapWebhookReturnsTypedEvents(t *testing.T) {
	secret := newWebhookSecret(t)
	agent := strings.ReplaceAll(agentJSON, "\n", "")
	reply := `{"id":"msg_1","agentId":"agt_1","userId":"u1","roomId":null,"text":"Hello there.","model":"m",` +
		`"modelProvider":"openai","finishReason":"stop","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3},` +
		`"latencyMs":12,"createdAt":"2026-11-20T09:30:00.812Z"}`

	event, err := agentry.UnwrapWebhook(webhookBody, signedHeader(t, secret, webhookBody, webhookNow), secret, atNow)
	if err != nil {
		t.Fatal(err)
	}
	created, ok := event.(*agentry.AgentCreatedWebhookEvent)
	if !ok || created.Data.Name != "Ada" || created.Type != agentry.WebhookEventAgentCreated ||
		!created.CreatedAt.Equal(time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)) {
		t.Fatalf("agent.created: %#v", event)
	}
	if e, ok := deliver(t, secret, "agent.updated", agent).(*agentry.AgentUpdatedWebhookEvent); !ok || e.Data.ID != "agt_1" {
		t.Errorf("agent.updated: %#v", e)
	}
	changed := strings.Replace(agent, `"status":"active"`, `"status":"inactive"`, 1)
	e, ok := deliver(t, secret, "agent.status_changed", changed).(*agentry.AgentStatusChangedWebhookEvent)
	if !ok || e.Data.Status != agentry.AgentStatusInactive || e.EventType() != agentry.WebhookEventAgentStatusChanged {
		t.Errorf("agent.status_changed: %#v", e)
	}
	if e, ok := deliver(t, secret, "agent.deleted", `{"id":"agt_1"}`).(*agentry.AgentDeletedWebhookEvent); !ok || e.Data.ID != "agt_1" {
		t.Errorf("agent.deleted: %#v", e)
	}
	if e, ok := deliver(t, secret, "message.completed", reply).(*agentry.MessageCompletedWebhookEvent); !ok ||
		e.Data.Text != "Hello there." || e.Data.Usage.TotalTokens != 3 {
		t.Errorf("message.completed: %#v", e)
	}
	failed := `{"agentId":"agt_1","messageId":"msg_1","code":"MODEL_ERROR","message":"No."}`
	if e, ok := deliver(t, secret, "message.failed", failed).(*agentry.MessageFailedWebhookEvent); !ok ||
		e.Data != (agentry.MessageFailedWebhookData{
			AgentID: "agt_1", MessageID: "msg_1", Code: agentry.ErrorCodeModelError, Message: "No.",
		}) {
		t.Errorf("message.failed: %#v", e)
	}
	test, ok := deliver(t, secret, "webhook.test", `{"note":"hello"}`).(*agentry.WebhookTestEvent)
	if !ok || test.Data["note"] != "hello" {
		t.Errorf("webhook.test: %#v", test)
	}
	unknown, ok := deliver(t, secret, "agent.renamed", `{"x":[1]}`).(*agentry.UnknownWebhookEvent)
	if !ok || unknown.EventType() != "agent.renamed" || string(unknown.Data) != `{"x":[1]}` {
		t.Errorf("agent.renamed: %#v", unknown)
	}
}

func TestUnwrapWebhookVerifiesFirstAndRefusesWhatIsNotAnEvent(t *testing.T) {
	secret := newWebhookSecret(t)
	h := signedHeader(t, secret, webhookBody, webhookNow)
	_, err := agentry.UnwrapWebhook([]byte("{not json"), h, secret, atNow)
	expectFailure(t, "unsigned", err, agentry.WebhookSignatureMismatch)
	for _, body := range []string{"{not json", "[]", "null", `{"type":"agent.created"}`, `{"id":"e","type":"agent.created","data":[]}`} {
		_, err := agentry.UnwrapWebhook([]byte(body), signedHeader(t, secret, []byte(body), webhookNow), secret, atNow)
		expectFailure(t, "%s", err, agentry.WebhookInvalidPayload)
	}
}

func TestClientWebhooks(t *testing.T) {
	secret := newWebhookSecret(t)
	client, err := agentry.NewClient(agentry.WithAPIKey("agentry_sk_test"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := client.Webhooks.Sign(webhookBody, secret, webhookEventID, webhookNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Webhooks.Verify(webhookBody, h, secret, atNow); err != nil {
		t.Fatal(err)
	}
	event, err := client.Webhooks.Unwrap(webhookBody, h, secret, atNow)
	if err != nil || event.EventType() != agentry.WebhookEventAgentCreated {
		t.Fatalf("%v %v", event, err)
	}
}
