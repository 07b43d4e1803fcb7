package agentry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
)

const (
	startedEvent   = "id: 1\nevent: message.started\ndata: {\"id\":\"msg_1\",\"agentId\":\"agt_1\",\"userId\":\"u\",\"roomId\":null}\n\n"
	completedEvent = "id: 4\nevent: message.completed\ndata: {\"id\":\"msg_1\",\"agentId\":\"agt_1\",\"userId\":\"u\",\"roomId\":null," +
		"\"text\":\"Hello there.\",\"model\":\"m\",\"modelProvider\":\"openai\",\"finishReason\":\"stop\"," +
		"\"usage\":{\"inputTokens\":1,\"outputTokens\":2,\"totalTokens\":3},\"latencyMs\":5,\"createdAt\":\"2026-11-20T09:30:00.812Z\"}\n\n"
)

func deltaEvent(id int, text string) string {
	return fmt.Sprintf("id: %d\nevent: message.delta\ndata: {\"text\":%q}\n\n", id, text)
}

// sse answers with an event stream written piece by piece, flushing each.
func sse(w http.ResponseWriter, pieces ...string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("X-Request-Id", "req_stream")
	w.WriteHeader(200)
	for _, piece := range pieces {
		io.WriteString(w, piece)
		w.(http.Flusher).Flush()
	}
}

func collect(stream *agentry.MessageStream) []string {
	var got []string
	for stream.Next() {
		event := stream.Current()
		got = append(got, event.EventID()+" "+event.EventName())
	}
	return got
}

func TestStream(t *testing.T) {
	ctx := context.Background()
	params := agentry.SendMessageParams{Text: "hi", UserID: agentry.String("u")}

	t.Run("events in order, then the helpers", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(w, ": ping\n\n", startedEvent, deltaEvent(2, "Hello"), "id: 9\nevent: message.future\ndata: {}\n\n",
				deltaEvent(3, " there."), completedEvent)
		})
		stream := s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		defer stream.Close()
		var text string
		var names []string
		for stream.Next() {
			switch event := stream.Current().(type) {
			case *agentry.MessageStartedEvent:
				names = append(names, "started:"+event.Data.ID)
			case *agentry.MessageDeltaEvent:
				text += event.Data.Text
				names = append(names, "delta:"+event.ID)
			case *agentry.MessageCompletedEvent:
				names = append(names, "completed:"+event.Data.Text)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(names, ",") != "started:msg_1,delta:2,delta:3,completed:Hello there." || text != "Hello there." {
			t.Errorf("events: %v %q", names, text)
		}
		reply, err := stream.FinalMessage()
		whole, textErr := stream.Text()
		if err != nil || textErr != nil || reply.Usage.TotalTokens != 3 || whole != "Hello there." || stream.RequestID() != "req_stream" {
			t.Errorf("helpers: %+v %v %q %v", reply, err, whole, textErr)
		}
		sent := s.request(0)
		if sent.body != `{"text":"hi","userId":"u","stream":true,"onDisconnect":"continue"}` || sent.header.Get("Accept") != "text/event-stream" {
			t.Errorf("request: %s %v", sent.body, sent.header)
		}
	})

	t.Run("an error event ends the stream with the error of its code, not retried", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(w, startedEvent, deltaEvent(2, "Hel"), "id: 3\nevent: error\ndata: {\"code\":\"AGENT_UNAVAILABLE\",\"message\":\"overloaded\"}\n\n")
		})
		stream := s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		got := collect(stream)
		var apiErr *agentry.APIError
		if !errors.As(stream.Err(), &apiErr) || apiErr.StatusCode != 503 || apiErr.Code != agentry.ErrorCodeAgentUnavailable ||
			apiErr.Message != "overloaded" || apiErr.RequestID != "req_stream" || !errors.Is(stream.Err(), agentry.ErrInternalServer) {
			t.Errorf("error: %v", stream.Err())
		}
		if strings.Join(got, ",") != "1 message.started,2 message.delta" || s.count() != 1 {
			t.Errorf("events %v in %d requests", got, s.count())
		}
		if text, err := stream.Text(); text != "Hel" || err != stream.Err() {
			t.Errorf("text: %q %v", text, err)
		}
		s = newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(w, "event: error\ndata: {\"code\":\"SOMETHING_NEW\",\"message\":\"?\"}\n\n")
		})
		stream = s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		collect(stream)
		if !errors.As(stream.Err(), &apiErr) || apiErr.StatusCode != 500 || apiErr.Code != "SOMETHING_NEW" {
			t.Errorf("an unknown code is a 500: %v", stream.Err())
		}
	})

	t.Run("a failure before the stream starts is retried like a message", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				writeError(w, 503, "AGENT_UNAVAILABLE")
				return
			}
			if n == 2 {
				writeError(w, 409, "AGENT_INACTIVE")
				return
			}
			sse(w, startedEvent, completedEvent)
		})
		stream := s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		got := collect(stream)
		if !errors.Is(stream.Err(), agentry.ErrConflict) || len(got) != 0 || s.count() != 2 {
			t.Errorf("%v %v after %d requests", got, stream.Err(), s.count())
		}
		if _, err := stream.FinalMessage(); !errors.Is(err, agentry.ErrConflict) {
			t.Errorf("final message: %v", err)
		}
	})

	t.Run("a stream that ends without its reply is a connection error", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(w, startedEvent, deltaEvent(2, "He")) })
		stream := s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		collect(stream)
		var connErr *agentry.ConnectionError
		// Resumed after its last event each time, until the resumptions were spent.
		if !errors.As(stream.Err(), &connErr) || connErr.Timeout || s.count() != 1+agentry.MaxReconnects {
			t.Errorf("%v after %d requests", stream.Err(), s.count())
		}
		resumed := s.request(1)
		if resumed.method != http.MethodGet || resumed.path != "/v1/agents/agt_1/messages/msg_1/events" ||
			resumed.header.Get("Last-Event-ID") != "2" || resumed.header.Get("Idempotency-Key") != "" {
			t.Errorf("resumption: %+v", resumed)
		}
	})

	t.Run("a dropped stream is resumed after its last event, unseen by the caller", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				sse(w, startedEvent, deltaEvent(2, "Hello"))
				panic(http.ErrAbortHandler)
			}
			sse(w, deltaEvent(2, "Hello"), deltaEvent(3, " there."), completedEvent)
		})
		stream := s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		got := collect(stream)
		if stream.Err() != nil || strings.Join(got, ",") != "1 message.started,2 message.delta,3 message.delta,4 message.completed" {
			t.Errorf("%v: %v", got, stream.Err())
		}
		if text, err := stream.Text(); text != "Hello there." || err != nil {
			t.Errorf("text %q %v", text, err)
		}
		if s.count() != 2 || s.request(1).header.Get("Last-Event-ID") != "2" {
			t.Errorf("%d requests, %+v", s.count(), s.request(1))
		}
		cancelling := agentry.SendMessageParams{Text: "hi", OnDisconnect: agentry.Ptr(agentry.SendMessageRequestOnDisconnectCancel)}
		s = newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(w, startedEvent, completedEvent) })
		if _, err := s.client(t).Agents.Messages.Stream(ctx, "agt_1", cancelling).FinalMessage(); err != nil ||
			s.request(0).body != `{"text":"hi","onDisconnect":"cancel","stream":true}` {
			t.Errorf("%v %s", err, s.request(0).body)
		}
	})

	t.Run("a silent stream times out; time spent by the caller does not count", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(w, startedEvent)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		stream := s.client(t, agentry.WithTimeout(100*time.Millisecond)).Agents.Messages.Stream(ctx, "agt_1", params)
		if !stream.Next() {
			t.Fatalf("first event: %v", stream.Err())
		}
		time.Sleep(250 * time.Millisecond)
		start := time.Now()
		if stream.Next() {
			t.Fatal("no second event")
		}
		if !errors.Is(stream.Err(), agentry.ErrTimeout) || time.Since(start) < 90*time.Millisecond {
			t.Errorf("%v after %v", stream.Err(), time.Since(start))
		}
	})

	t.Run("Close and cancellation end the stream and its connection", func(t *testing.T) {
		gone := make(chan struct{}, 2)
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(w, startedEvent)
			<-r.Context().Done()
			gone <- struct{}{}
		})
		c := s.client(t)
		stream := c.Agents.Messages.Stream(ctx, "agt_1", params)
		if !stream.Next() {
			t.Fatal(stream.Err())
		}
		time.AfterFunc(50*time.Millisecond, func() { stream.Close() })
		if stream.Next() || stream.Err() != nil {
			t.Errorf("closed: %v", stream.Err())
		}
		if _, err := stream.FinalMessage(); !errors.Is(err, agentry.ErrStreamClosed) {
			t.Errorf("final message of a closed stream: %v", err)
		}
		waitGone(t, gone)

		cancelCtx, cancel := context.WithCancel(ctx)
		stream = c.Agents.Messages.Stream(cancelCtx, "agt_1", params)
		if !stream.Next() {
			t.Fatal(stream.Err())
		}
		time.AfterFunc(50*time.Millisecond, cancel)
		if stream.Next() || !errors.Is(stream.Err(), context.Canceled) {
			t.Errorf("cancelled: %v", stream.Err())
		}
		waitGone(t, gone)
	})

	t.Run("an invalid id fails without a request", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {})
		stream := s.client(t).Agents.Messages.Stream(ctx, "", params)
		if stream.Next() || stream.Err() == nil || s.count() != 0 {
			t.Errorf("%v", stream.Err())
		}
		if err := stream.Close(); err != nil {
			t.Error(err)
		}
	})
}

func waitGone(t *testing.T, gone chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still holds the connection")
	}
}
