package agentry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
)

const agentJSON = `{"id":"agt_1","name":"Ada","bio":["Counts"],"personality":{},"knowledge":[],"goals":[],
"clients":["discord",{"type":"telegram","channel":"@ada"}],"settings":{"temperature":0.5,"theme":"dark"},
"modelProvider":null,"model":null,"plugins":["web",{"name":"calc","enabled":true}],"status":"active",
"statusReason":null,"createdAt":"2026-11-20T09:30:00.000Z","updatedAt":"2026-11-20T09:30:00.000Z",
"apiEndpoint":"http://localhost/v1/agents/agt_1/messages"}`

// uuidPattern matches a version 4 UUID, the form of the Idempotency-Key the SDK makes.
var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// recorded is one request the test server received.
type recorded struct {
	method, path, query string
	header              http.Header
	body                string
}

// server is an httptest server answering with handle, numbering the requests from 1.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		n := len(s.requests)
		s.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *server) request(i int) recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

func (s *server) client(t *testing.T, opts ...agentry.Option) *agentry.Client {
	t.Helper()
	all := append([]agentry.Option{
		agentry.WithAPIKey("agentry_sk_test"), agentry.WithBaseURL(s.URL + "/v1"),
		agentry.WithMaxRetryDelay(time.Millisecond),
	}, opts...)
	c, err := agentry.NewClient(all...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req_test")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func writeError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, fmt.Sprintf(`{"success":false,"error":{"code":%q,"message":"it failed","requestId":"req_body"}}`, code))
}

func TestNewClientConfiguration(t *testing.T) {
	t.Setenv("AGENTRY_API_KEY", "")
	t.Setenv("AGENTRY_BASE_URL", "")
	if _, err := agentry.NewClient(); err == nil || !strings.Contains(err.Error(), "AGENTRY_API_KEY") {
		t.Fatalf("no key: %v", err)
	}
	for _, opt := range []agentry.Option{
		agentry.WithMaxRetries(-1), agentry.WithTimeout(0), agentry.WithMaxRetryDelay(-time.Second),
		agentry.WithBaseURL("localhost:8080"), agentry.WithHTTPClient(nil),
	} {
		if _, err := agentry.NewClient(agentry.WithAPIKey("k"), opt); err == nil {
			t.Error("an invalid option is refused")
		}
	}

	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, `{"success":true,"data":`+agentJSON+`}`)
	})
	t.Setenv("AGENTRY_API_KEY", "agentry_sk_from_env")
	t.Setenv("AGENTRY_BASE_URL", s.URL+"/v1/")
	c, err := agentry.NewClient(agentry.WithHeader("X-Team", "core"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Agents.Get(context.Background(), "agt_1", agentry.WithHeader("X-Call", "one"), agentry.WithAPIKey("agentry_sk_call")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Agents.Get(context.Background(), "agt_1"); err != nil {
		t.Fatal(err)
	}
	first, second := s.request(0), s.request(1)
	if first.path != "/v1/agents/agt_1" || first.method != "GET" {
		t.Errorf("request: %s %s", first.method, first.path)
	}
	if got := first.header.Get("Authorization"); got != "Bearer agentry_sk_call" {
		t.Errorf("a call's option wins: %q", got)
	}
	if got := second.header.Get("Authorization"); got != "Bearer agentry_sk_from_env" {
		t.Errorf("the environment's key: %q", got)
	}
	if first.header.Get("X-Team") != "core" || first.header.Get("X-Call") != "one" || second.header.Get("X-Call") != "" {
		t.Errorf("headers: %v / %v", first.header, second.header)
	}
	if !strings.HasPrefix(first.header.Get("User-Agent"), "agentry-go/") || first.header.Get("Accept") != "application/json" {
		t.Errorf("headers: %v", first.header)
	}
}

func TestModelsRoundTrip(t *testing.T) {
	var agent agentry.Agent
	if err := json.Unmarshal([]byte(agentJSON), &agent); err != nil {
		t.Fatal(err)
	}
	if *agent.Clients[0].OfString != "discord" || agent.Clients[1].OfClientIntegration.Type != "telegram" ||
		agent.Clients[1].OfClientIntegration.Extra["channel"] != "@ada" {
		t.Errorf("clients: %+v", agent.Clients)
	}
	if temperature, ok := agent.Settings.Temperature.Get(); !ok || temperature != 0.5 || agent.Settings.Extra["theme"] != "dark" {
		t.Errorf("settings: %+v", agent.Settings)
	}
	if agent.Settings.MaxTokens.IsSet() || agent.ModelProvider != nil || agent.StatusReason != nil {
		t.Errorf("absent and null fields: %+v", agent)
	}
	if !agent.CreatedAt.Equal(time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)) {
		t.Errorf("createdAt: %v", agent.CreatedAt)
	}
	encoded, err := json.Marshal(agent)
	if err != nil {
		t.Fatal(err)
	}
	var back, original map[string]any
	json.Unmarshal(encoded, &back)
	json.Unmarshal([]byte(agentJSON), &original)
	original["createdAt"], original["updatedAt"] = "2026-11-20T09:30:00Z", "2026-11-20T09:30:00Z"
	if fmt.Sprint(back) != fmt.Sprint(original) {
		t.Errorf("round trip:\n got %v\nwant %v", back, original)
	}
	if _, err := json.Marshal(agentry.AgentClient{}); err == nil {
		t.Error("a union with no variant set cannot be encoded")
	}
}

func TestUpdateSendsOnlyWhatIsSet(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, `{"success":true,"data":`+agentJSON+`}`)
	})
	c := s.client(t)
	ctx := context.Background()
	updates := []struct {
		params agentry.UpdateAgentParams
		want   string
	}{
		{agentry.UpdateAgentParams{}, `{}`},
		{agentry.UpdateAgentParams{Model: agentry.Null[string](), ModelProvider: agentry.Value(agentry.ModelProviderOpenAI)},
			`{"modelProvider":"openai","model":null}`},
		{agentry.UpdateAgentParams{Name: agentry.String("Ada"), Bio: []string{}, Status: agentry.Ptr(agentry.AgentStatusInactive)},
			`{"name":"Ada","bio":[],"status":"inactive"}`},
		{agentry.UpdateAgentParams{Settings: &agentry.AgentSettings{MaxTokens: agentry.Null[int](), Extra: map[string]any{"b": 1, "a": "x"}},
			Plugins: []agentry.AgentPlugin{agentry.AgentPluginOfString("web"), agentry.AgentPluginOfPluginConfig(agentry.PluginConfig{Name: "calc"})}},
			`{"settings":{"maxTokens":null,"a":"x","b":1},"plugins":["web",{"name":"calc"}]}`},
	}
	for i, u := range updates {
		if _, err := c.Agents.Update(ctx, "agt_1", u.params); err != nil {
			t.Fatal(err)
		}
		if got := s.request(i); got.body != u.want || got.method != "PATCH" || got.header.Get("Content-Type") != "application/json" {
			t.Errorf("update %d: %s %s", i, got.method, got.body)
		}
	}
	if _, err := c.Agents.Update(ctx, "", agentry.UpdateAgentParams{}); err == nil || s.count() != len(updates) {
		t.Error("an empty id is refused before sending")
	}
	if _, err := c.Agents.Get(ctx, "agt_1/../x"); err != nil {
		t.Fatal(err)
	}
	if got := s.request(len(updates)).path; got != "/v1/agents/agt_1/../x" {
		t.Errorf("the id is one escaped path segment: %s", got)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		status   int
		code     string
		sentinel error
	}{
		{400, "INVALID_REQUEST", agentry.ErrBadRequest},
		{413, "PAYLOAD_TOO_LARGE", agentry.ErrBadRequest},
		{401, "UNAUTHORIZED", agentry.ErrAuthentication},
		{403, "INSUFFICIENT_QUOTA", agentry.ErrPermissionDenied},
		{404, "AGENT_NOT_FOUND", agentry.ErrNotFound},
		{409, "AGENT_INACTIVE", agentry.ErrConflict},
		{429, "RATE_LIMIT_EXCEEDED", agentry.ErrRateLimit},
		{502, "MODEL_ERROR", agentry.ErrInternalServer},
	}
	for _, c := range cases {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Retry-After", "7")
			writeError(w, c.status, c.code)
		})
		_, err := s.client(t, agentry.WithMaxRetries(0)).Agents.Messages.Send(context.Background(), "agt_1", agentry.SendMessageParams{Text: "hi"})
		var apiErr *agentry.APIError
		if !errors.As(err, &apiErr) || !errors.Is(err, c.sentinel) {
			t.Fatalf("%d: %v", c.status, err)
		}
		if apiErr.StatusCode != c.status || string(apiErr.Code) != c.code || apiErr.Message != "it failed" ||
			apiErr.RequestID != "req_body" || apiErr.RetryAfter != 7*time.Second || !apiErr.RetryAfterSet() {
			t.Errorf("%d: %+v", c.status, apiErr)
		}
		if errors.Is(err, agentry.ErrNotFound) != (c.status == 404) {
			t.Errorf("%d matches only its family", c.status)
		}
	}

	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 400, `{"success":false,"error":{"code":"INVALID_REQUEST","message":"bad","requestId":"req_x",
			"details":[{"field":"name","issue":"must not be empty"}]}}`)
	})
	_, err := s.client(t).Agents.Create(context.Background(), agentry.CreateAgentParams{})
	var apiErr *agentry.APIError
	if !errors.As(err, &apiErr) || len(apiErr.Details) != 1 || apiErr.Details[0].Field != "name" || s.count() != 1 {
		t.Errorf("details: %v %+v", err, apiErr)
	}

	s = newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("X-Request-Id", "req_plain")
		w.WriteHeader(418)
		io.WriteString(w, "I'm a teapot")
	})
	_, err = s.client(t).Agents.Get(context.Background(), "agt_1")
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 418 || apiErr.Message != "I'm a teapot" ||
		apiErr.RequestID != "req_plain" || apiErr.Code != "" || errors.Is(err, agentry.ErrBadRequest) {
		t.Errorf("a status outside the families: %v %+v", err, apiErr)
	}
	if !strings.Contains(err.Error(), "418") || !strings.Contains(err.Error(), "req_plain") {
		t.Errorf("message: %v", err)
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("idempotent calls are retried on 5xx, with the rate-limit state recorded", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("X-RateLimit-Limit", "100")
			w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(100-n))
			w.Header().Set("X-RateLimit-Reset", "1800000000")
			if n < 3 {
				writeError(w, 500, "INTERNAL_ERROR")
				return
			}
			writeJSON(w, 200, `{"success":true,"data":`+agentJSON+`}`)
		})
		c := s.client(t)
		if c.LastRateLimit() != nil {
			t.Error("no state before the first response")
		}
		agent, err := c.Agents.Get(ctx, "agt_1")
		if err != nil || agent.Name != "Ada" || s.count() != 3 {
			t.Fatalf("%v after %d requests", err, s.count())
		}
		if rl := c.LastRateLimit(); rl == nil || rl.Limit != 100 || rl.Remaining != 97 || rl.Reset.Unix() != 1800000000 {
			t.Errorf("rate limit: %+v", rl)
		}
	})
	t.Run("retries are spent, then the last error is returned", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeError(w, 503, "AGENT_UNAVAILABLE") })
		_, err := s.client(t, agentry.WithMaxRetries(3)).Agents.Messages.Send(ctx, "agt_1", agentry.SendMessageParams{Text: "hi"})
		if !errors.Is(err, agentry.ErrInternalServer) || s.count() != 4 {
			t.Errorf("%v after %d requests", err, s.count())
		}
	})
	t.Run("creates are retried like reads, every attempt under one Idempotency-Key", func(t *testing.T) {
		for _, status := range []int{500, 502, 503, 429} {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n < 3 {
					w.Header().Set("Retry-After", "0")
					writeError(w, status, "SOMETHING")
					return
				}
				writeJSON(w, 201, `{"success":true,"data":`+agentJSON+`}`)
			})
			if _, err := s.client(t).Agents.Create(ctx, agentry.CreateAgentParams{Name: "A"}); err != nil || s.count() != 3 {
				t.Fatalf("%d: %v after %d requests", status, err, s.count())
			}
			key := s.request(0).header.Get("Idempotency-Key")
			if !uuidPattern.MatchString(key) || s.request(1).header.Get("Idempotency-Key") != key ||
				s.request(2).header.Get("Idempotency-Key") != key {
				t.Errorf("%d: keys %q %q %q", status, key, s.request(1).header.Get("Idempotency-Key"),
					s.request(2).header.Get("Idempotency-Key"))
			}
		}
	})
	t.Run("every write carries a key, a new one per call or the caller's own; a read none", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.Method == http.MethodDelete {
				writeJSON(w, 200, `{"success":true,"data":{"id":"agt_1","deleted":true}}`)
				return
			}
			writeJSON(w, 200, `{"success":true,"data":`+agentJSON+`}`)
		})
		c := s.client(t)
		_, _ = c.Agents.Create(ctx, agentry.CreateAgentParams{Name: "A"})
		_, _ = c.Agents.Create(ctx, agentry.CreateAgentParams{Name: "A"})
		_, _ = c.Agents.Update(ctx, "agt_1", agentry.UpdateAgentParams{Name: agentry.String("B")}, agentry.WithIdempotencyKey("rename-1"))
		_, _ = c.Agents.Delete(ctx, "agt_1")
		_, _ = c.Agents.Get(ctx, "agt_1", agentry.WithIdempotencyKey("ignored"))
		var keys []string
		for i := range s.count() {
			keys = append(keys, s.request(i).header.Get("Idempotency-Key"))
		}
		if len(keys) != 5 || keys[0] == keys[1] || keys[2] != "rename-1" || keys[4] != "" ||
			!uuidPattern.MatchString(keys[0]) || !uuidPattern.MatchString(keys[1]) || !uuidPattern.MatchString(keys[3]) {
			t.Errorf("keys %q", keys)
		}
		if _, err := agentry.NewClient(agentry.WithAPIKey("k"), agentry.WithIdempotencyKey("shared")); err == nil ||
			!strings.Contains(err.Error(), "option of one call") {
			t.Errorf("a client-wide key is refused: %v", err)
		}
		if _, err := c.Agents.Delete(ctx, "agt_1", agentry.WithIdempotencyKey("")); err == nil {
			t.Error("an empty key is refused")
		}
	})
	t.Run("WithIfMatch sends the agent's ETag; 412 PRECONDITION_FAILED is a conflict, never retried", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				writeJSON(w, 200, `{"success":true,"data":`+agentJSON+`,"warnings":[]}`)
				return
			}
			writeError(w, 412, "PRECONDITION_FAILED")
		})
		c := s.client(t)
		if _, err := c.Agents.Update(ctx, "agt_1", agentry.UpdateAgentParams{Name: agentry.String("B")},
			agentry.WithIfMatch("2026-11-29T01:40:00.123Z")); err != nil {
			t.Fatal(err)
		}
		_, err := c.Agents.Delete(ctx, "agt_1", agentry.WithIfMatch(`W/"2026-11-29T01:40:00.123Z"`))
		var apiErr *agentry.APIError
		if !errors.Is(err, agentry.ErrConflict) || !errors.As(err, &apiErr) || apiErr.StatusCode != 412 ||
			apiErr.Code != agentry.ErrorCodePreconditionFailed || s.count() != 2 {
			t.Errorf("%v after %d requests", err, s.count())
		}
		for i := range 2 {
			if got := s.request(i).header.Get("If-Match"); got != `W/"2026-11-29T01:40:00.123Z"` {
				t.Errorf("request %d: If-Match %q", i, got)
			}
		}
	})
	t.Run("IDEMPOTENCY_KEY_IN_USE waits its Retry-After; IDEMPOTENCY_KEY_REUSED is a bad request, never retried", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				writeError(w, 409, "IDEMPOTENCY_KEY_IN_USE")
				return
			}
			writeJSON(w, 201, `{"success":true,"data":`+agentJSON+`}`)
		})
		start := time.Now()
		_, err := s.client(t, agentry.WithMaxRetryDelay(time.Minute)).Agents.Create(ctx, agentry.CreateAgentParams{Name: "A"},
			agentry.WithIdempotencyKey("ada-1"))
		if err != nil || s.count() != 2 || time.Since(start) < time.Second ||
			s.request(1).header.Get("Idempotency-Key") != "ada-1" {
			t.Errorf("%v after %d requests in %v", err, s.count(), time.Since(start))
		}
		s = newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeError(w, 422, "IDEMPOTENCY_KEY_REUSED") })
		_, err = s.client(t).Agents.Create(ctx, agentry.CreateAgentParams{Name: "B"}, agentry.WithIdempotencyKey("ada-1"))
		var apiErr *agentry.APIError
		if !errors.Is(err, agentry.ErrBadRequest) || !errors.As(err, &apiErr) || apiErr.StatusCode != 422 ||
			apiErr.Code != agentry.ErrorCodeIdempotencyKeyReused || s.count() != 1 {
			t.Errorf("%v after %d requests", err, s.count())
		}
	})
	t.Run("a per-call option overrides the retries", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeError(w, 500, "INTERNAL_ERROR") })
		if _, err := s.client(t).Agents.Get(ctx, "agt_1", agentry.WithMaxRetries(0)); err == nil || s.count() != 1 {
			t.Errorf("%v after %d requests", err, s.count())
		}
	})
	t.Run("a long Retry-After is cut to the max delay, and still reported", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Retry-After", "3600")
			writeError(w, 429, "RATE_LIMIT_EXCEEDED")
		})
		start := time.Now()
		_, err := s.client(t, agentry.WithMaxRetryDelay(20*time.Millisecond)).Agents.Get(ctx, "agt_1")
		var apiErr *agentry.APIError
		if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Hour || s.count() != 3 || time.Since(start) > 5*time.Second {
			t.Errorf("%v after %d requests in %v", err, s.count(), time.Since(start))
		}
	})
	t.Run("the backoff waits between attempts", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeError(w, 500, "INTERNAL_ERROR") })
		start := time.Now()
		_, _ = s.client(t, agentry.WithMaxRetryDelay(time.Minute), agentry.WithMaxRetries(1)).Agents.Get(ctx, "agt_1")
		if elapsed := time.Since(start); elapsed < 375*time.Millisecond || s.count() != 2 {
			t.Errorf("waited %v for %d requests; the first backoff is 0.5 s less up to 25 %%", elapsed, s.count())
		}
	})
	t.Run("timeouts: retried for reads and for messages", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		c := s.client(t, agentry.WithTimeout(30*time.Millisecond))
		_, err := c.Agents.Get(ctx, "agt_1")
		var connErr *agentry.ConnectionError
		if !errors.As(err, &connErr) || !connErr.Timeout || !errors.Is(err, agentry.ErrTimeout) || s.count() != 3 {
			t.Errorf("%v after %d requests", err, s.count())
		}
		_, err = c.Agents.Messages.Send(ctx, "agt_1", agentry.SendMessageParams{Text: "hi"})
		if !errors.Is(err, agentry.ErrTimeout) || s.count() != 6 {
			t.Errorf("%v after %d requests", err, s.count())
		}
		if key := s.request(3).header.Get("Idempotency-Key"); key == "" || s.request(5).header.Get("Idempotency-Key") != key {
			t.Errorf("the message's attempts share their key: %q, %q", key, s.request(5).header.Get("Idempotency-Key"))
		}
	})
	t.Run("a refused connection is a ConnectionError, retried", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {})
		c := s.client(t)
		s.Close()
		start := time.Now()
		_, err := c.Agents.Create(ctx, agentry.CreateAgentParams{Name: "A"}, agentry.WithMaxRetryDelay(50*time.Millisecond))
		var connErr *agentry.ConnectionError
		if !errors.As(err, &connErr) || connErr.Timeout || errors.Is(err, agentry.ErrTimeout) {
			t.Errorf("%v", err)
		}
		if elapsed := time.Since(start); elapsed < 100*time.Millisecond {
			t.Errorf("two retries of 50 ms each were waited for, got %v", elapsed)
		}
	})
	t.Run("cancelling the context stops the retries", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeError(w, 503, "AGENT_UNAVAILABLE") })
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := s.client(t, agentry.WithMaxRetryDelay(time.Minute)).Agents.Get(ctx, "agt_1")
		if !errors.Is(err, context.Canceled) || s.count() != 1 {
			t.Errorf("%v after %d requests", err, s.count())
		}
	})
}

func TestPagination(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	var failPage atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		page, limit := 1, 2
		fmt.Sscan(r.URL.Query().Get("page"), &page)
		if int(failPage.Load()) == page {
			writeError(w, 400, "INVALID_REQUEST")
			return
		}
		var items []string
		for i := (page - 1) * limit; i < min(page*limit, len(names)); i++ {
			items = append(items, fmt.Sprintf(`{"id":"agt_%s","name":%q}`, names[i], names[i]))
		}
		hasMore := page*limit < len(names)
		writeJSON(w, 200, fmt.Sprintf(`{"success":true,"data":[%s],"pagination":{"page":%d,"limit":%d,"total":5,"totalPages":3,"hasMore":%v}}`,
			strings.Join(items, ","), page, limit, hasMore))
	})
	c := s.client(t)
	ctx := context.Background()
	params := agentry.ListAgentsParams{Limit: agentry.Int(2), SortBy: agentry.Ptr(agentry.SortByName), Order: agentry.Ptr(agentry.SortOrderAsc)}

	page, err := c.Agents.List(ctx, params)
	if err != nil || len(page.Data) != 2 || !page.HasNextPage() || page.Pagination.Total != 5 {
		t.Fatalf("%v %+v", err, page)
	}
	if got := s.request(0).query; got != "limit=2&order=asc&sortBy=name" {
		t.Errorf("query: %s", got)
	}
	last, err := page.NextPage(ctx)
	if err == nil {
		last, err = last.NextPage(ctx)
	}
	if err != nil || last.HasNextPage() || last.Data[0].Name != "e" || s.request(2).query != "limit=2&order=asc&page=3&sortBy=name" {
		t.Fatalf("%v %+v", err, last)
	}
	if _, err := last.NextPage(ctx); !errors.Is(err, agentry.ErrNoNextPage) {
		t.Errorf("no page after the last: %v", err)
	}

	before := s.count()
	var got []string
	for agent, err := range c.Agents.ListAll(ctx, params) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, agent.Name)
	}
	if strings.Join(got, "") != "abcde" || s.count()-before != 3 {
		t.Errorf("every item, one request a page: %v in %d requests", got, s.count()-before)
	}

	before = s.count()
	for agent := range c.Agents.ListAll(ctx, params) {
		if agent.Name == "b" {
			break
		}
	}
	if s.count()-before != 1 {
		t.Errorf("breaking out of the loop fetches no more pages: %d requests", s.count()-before)
	}

	failPage.Store(2)
	var seen []string
	var failure error
	for agent, err := range page.All(ctx) {
		if err != nil {
			failure = err
			continue
		}
		seen = append(seen, agent.Name)
	}
	if strings.Join(seen, "") != "ab" || !errors.Is(failure, agentry.ErrBadRequest) {
		t.Errorf("a failed page ends the iteration with its error: %v %v", seen, failure)
	}
}
