package agentry_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
)

const (
	backgroundID      = "msg_01JAAAAAAAAAAAAAAAAAAAAAAA"
	pendingJSON       = `{"id":"msg_01JAAAAAAAAAAAAAAAAAAAAAAA","agentId":"agt_1","userId":null,"roomId":null,"status":"pending"}`
	failedJSON        = `{"id":"msg_01JAAAAAAAAAAAAAAAAAAAAAAA","agentId":"agt_1","userId":null,"roomId":null,"status":"failed","error":{"code":"MODEL_ERROR","message":"no"}}`
	completedJSON     = `{"id":"msg_01JAAAAAAAAAAAAAAAAAAAAAAA","agentId":"agt_1","userId":"u1","roomId":null,"status":"completed","text":"Hello there.","model":"gpt-4o-mini","modelProvider":"openai","finishReason":"stop","usage":{"inputTokens":4,"outputTokens":3,"totalTokens":7},"latencyMs":12,"createdAt":"2026-11-20T09:30:00.812Z"}`
	storedMessageJSON = `{"id":"msg_01JAAAAAAAAAAAAAAAAAAAAAAA","agentId":"agt_1","conversationId":"conv_1","userId":"u1","roomId":null,"role":"assistant","text":"Hello there.","createdAt":"2026-11-20T09:30:00.812Z"}`
)

func data(object string) string { return `{"success":true,"data":` + object + `}` }

func TestBackgroundMessages(t *testing.T) {
	ctx := context.Background()

	t.Run("SendBackground posts background: true with an Idempotency-Key and returns the accepted id", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeJSON(w, 202, data(`{"id":"`+backgroundID+`","status":"pending"}`))
		})
		text, user := "work", "u1"
		accepted, err := s.client(t).Agents.Messages.SendBackground(ctx, "agt_1",
			agentry.SendMessageParams{Text: text, UserID: &user})
		if err != nil {
			t.Fatal(err)
		}
		if accepted.ID != backgroundID || accepted.Status != "pending" {
			t.Fatalf("accepted = %+v", accepted)
		}
		req := s.request(0)
		if req.method != http.MethodPost || req.path != "/v1/agents/agt_1/messages" {
			t.Fatalf("request = %s %s", req.method, req.path)
		}
		if req.body != `{"text":"work","userId":"u1","background":true}` {
			t.Fatalf("body = %s", req.body)
		}
		if !uuidPattern.MatchString(req.header.Get("Idempotency-Key")) {
			t.Fatalf("Idempotency-Key = %q", req.header.Get("Idempotency-Key"))
		}
	})

	t.Run("GetBackground reads each state, and refuses a stored message", func(t *testing.T) {
		answers := []string{pendingJSON, completedJSON, failedJSON, storedMessageJSON}
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			writeJSON(w, 200, data(answers[n-1]))
		})
		messages := s.client(t).Agents.Messages
		for _, want := range []string{"pending", "completed", "failed"} {
			message, err := messages.GetBackground(ctx, "agt_1", backgroundID)
			if err != nil {
				t.Fatal(err)
			}
			if string(message.Status) != want {
				t.Fatalf("status = %s, want %s", message.Status, want)
			}
			switch want {
			case "completed":
				if message.Text == nil || *message.Text != "Hello there." || message.Usage.TotalTokens != 7 {
					t.Fatalf("completed = %+v", message)
				}
			case "failed":
				if message.Error == nil || message.Error.Code != "MODEL_ERROR" || message.Text != nil {
					t.Fatalf("failed = %+v", message)
				}
			}
		}
		_, err := messages.GetBackground(ctx, "agt_1", backgroundID)
		if !errors.Is(err, agentry.ErrOtherAnswerType) || !strings.Contains(err.Error(), "Get") {
			t.Fatalf("err = %v", err)
		}
		if got := s.request(0).path; got != "/v1/agents/agt_1/messages/"+backgroundID {
			t.Fatalf("path = %s", got)
		}
	})

	t.Run("WaitForBackground reads again while pending, pausing twice as long each time", func(t *testing.T) {
		var times []time.Time
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			times = append(times, time.Now())
			if n < 3 {
				writeJSON(w, 200, data(pendingJSON))
				return
			}
			writeJSON(w, 200, data(failedJSON))
		})
		message, err := s.client(t).Agents.Messages.WaitForBackground(ctx, "agt_1", backgroundID,
			agentry.WithPollInterval(40*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if message.Status != "failed" || message.Error.Code != "MODEL_ERROR" || s.count() != 3 {
			t.Fatalf("message = %+v after %d reads", message, s.count())
		}
		if first, second := times[1].Sub(times[0]), times[2].Sub(times[1]); first < 40*time.Millisecond || second < 80*time.Millisecond {
			t.Fatalf("pauses = %v, %v", first, second)
		}
	})

	t.Run("WaitForBackground gives up after WithMaxWait, and ends with its context", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeJSON(w, 200, data(pendingJSON))
		})
		messages := s.client(t).Agents.Messages
		_, err := messages.WaitForBackground(ctx, "agt_1", backgroundID,
			agentry.WithPollInterval(10*time.Millisecond), agentry.WithMaxWait(50*time.Millisecond))
		var conn *agentry.ConnectionError
		if !errors.Is(err, agentry.ErrTimeout) || !errors.As(err, &conn) {
			t.Fatalf("err = %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		_, err = messages.WaitForBackground(short, "agt_1", backgroundID, agentry.WithPollInterval(time.Second))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if _, err := messages.WaitForBackground(ctx, "agt_1", backgroundID, agentry.WithPollInterval(0)); err == nil ||
			!strings.Contains(err.Error(), "WithPollInterval") {
			t.Fatalf("err = %v", err)
		}
	})
}
