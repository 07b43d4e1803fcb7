package agentry_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	agentry "github.com/agentry/agentry-go"
)

const (
	toolCallJSON   = `{"id":"call_1","name":"calculator__calculate","arguments":{"expression":"6 * 7"}}`
	toolResultJSON = `{"id":"call_1","name":"calculator__calculate","arguments":{"expression":"6 * 7"},"ok":true,"output":{"result":"42"}}`
	toolFailedJSON = `{"id":"call_2","name":"calculator__calculate","arguments":{"expression":"1/0"},"ok":false,"error":"Division by zero"}`
	toolReplyJSON  = `{"id":"msg_1","agentId":"agt_1","userId":null,"roomId":null,"text":"42","model":"m","modelProvider":"openai",` +
		`"finishReason":"stop","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3},"latencyMs":5,` +
		`"createdAt":"2026-11-20T09:30:00.812Z","toolCalls":[` + toolResultJSON + `,` + toolFailedJSON + `]}`
)

func TestPluginsAndSecrets(t *testing.T) {
	ctx := context.Background()

	t.Run("the catalogue is typed", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			writeJSON(w, 200, `{"success":true,"data":[{"name":"calculator","version":"1.0.0","description":"Arithmetic.",`+
				`"configSchema":{"type":"object"},"secrets":[],"tools":[{"name":"calculate","description":"Compute.",`+
				`"inputSchema":{"type":"object","required":["expression"]}}]}]}`)
		})
		plugins, err := s.client(t).Plugins.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.request(0); got.method != "GET" || got.path != "/v1/plugins" {
			t.Errorf("request %s %s", got.method, got.path)
		}
		if len(plugins) != 1 || plugins[0].Name != "calculator" || plugins[0].Tools[0].Name != "calculate" ||
			plugins[0].Tools[0].InputSchema["type"] != "object" {
			t.Errorf("plugins %+v", plugins)
		}
	})

	t.Run("secrets map to their routes; the value goes only in the PUT, with an Idempotency-Key", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			switch n {
			case 1:
				writeJSON(w, 200, `{"success":true,"data":{"name":"MCP_TOKEN","updatedAt":"2026-01-01T00:00:00.000Z"}}`)
			case 2:
				writeJSON(w, 200, `{"success":true,"data":[{"name":"MCP_TOKEN","updatedAt":"2026-01-01T00:00:00.000Z"}]}`)
			case 3:
				writeJSON(w, 200, `{"success":true,"data":{"name":"MCP_TOKEN","deleted":true}}`)
			default:
				writeJSON(w, 404, `{"success":false,"error":{"code":"SECRET_NOT_FOUND","message":"No such secret.","requestId":"req_1"}}`)
			}
		})
		secrets := s.client(t).Agents.Secrets
		set, err := secrets.Set(ctx, "agt_1", "MCP_TOKEN", agentry.PutSecretParams{Value: "s3cret"})
		if err != nil || set.Name != "MCP_TOKEN" || set.UpdatedAt.Year() != 2026 {
			t.Fatalf("set %+v, %v", set, err)
		}
		listed, err := secrets.List(ctx, "agt_1")
		if err != nil || len(listed) != 1 || listed[0].Name != "MCP_TOKEN" {
			t.Fatalf("list %+v, %v", listed, err)
		}
		deleted, err := secrets.Delete(ctx, "agt_1", "MCP_TOKEN")
		if err != nil || !deleted.Deleted {
			t.Fatalf("delete %+v, %v", deleted, err)
		}
		_, err = secrets.Delete(ctx, "agt_1", "MCP_TOKEN")
		var apiErr *agentry.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != "SECRET_NOT_FOUND" || !errors.Is(err, agentry.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
		want := []string{"PUT /v1/agents/agt_1/secrets/MCP_TOKEN", "GET /v1/agents/agt_1/secrets",
			"DELETE /v1/agents/agt_1/secrets/MCP_TOKEN"}
		for i, line := range want {
			if got := s.request(i); got.method+" "+got.path != line {
				t.Errorf("request %d: %s %s, want %s", i, got.method, got.path, line)
			}
		}
		if body := s.request(0).body; body != `{"value":"s3cret"}` {
			t.Errorf("PUT body %s", body)
		}
		if !uuidPattern.MatchString(s.request(0).header.Get("Idempotency-Key")) {
			t.Errorf("PUT Idempotency-Key %q", s.request(0).header.Get("Idempotency-Key"))
		}
		if s.request(1).header.Get("Idempotency-Key") != "" {
			t.Error("a GET carried an Idempotency-Key")
		}
	})
}

func TestToolCalls(t *testing.T) {
	ctx := context.Background()
	params := agentry.SendMessageParams{Text: "6 * 7?"}

	t.Run("a reply carries typed toolCalls", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			writeJSON(w, 200, `{"success":true,"data":`+toolReplyJSON+`}`)
		})
		reply, err := s.client(t).Agents.Messages.Send(ctx, "agt_1", params)
		if err != nil {
			t.Fatal(err)
		}
		if len(reply.ToolCalls) != 2 {
			t.Fatalf("toolCalls %+v", reply.ToolCalls)
		}
		first, second := reply.ToolCalls[0], reply.ToolCalls[1]
		if !first.Ok || first.Output.(map[string]any)["result"] != "42" || first.Error != nil {
			t.Errorf("first %+v", first)
		}
		if second.Ok || second.Error == nil || *second.Error != "Division by zero" {
			t.Errorf("second %+v", second)
		}
	})

	t.Run("a stream yields tool.call and tool.result as typed events between the deltas", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(w, startedEvent, "id: 2\nevent: tool.call\ndata: "+toolCallJSON+"\n\n",
				"id: 3\nevent: tool.result\ndata: "+toolResultJSON+"\n\n", deltaEvent(4, "42"),
				"id: 5\nevent: message.completed\ndata: "+toolReplyJSON+"\n\n")
		})
		stream := s.client(t).Agents.Messages.Stream(ctx, "agt_1", params)
		defer stream.Close()
		var names []string
		for stream.Next() {
			names = append(names, stream.Current().EventName())
			switch event := stream.Current().(type) {
			case *agentry.ToolCallEvent:
				if event.ID != "2" || event.Data.Name != "calculator__calculate" ||
					event.Data.Arguments.(map[string]any)["expression"] != "6 * 7" {
					t.Errorf("tool.call %+v", event)
				}
			case *agentry.ToolResultEvent:
				if event.ID != "3" || !event.Data.Ok || event.Data.Output.(map[string]any)["result"] != "42" {
					t.Errorf("tool.result %+v", event)
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		want := "message.started tool.call tool.result message.delta message.completed"
		if got := strings.Join(names, " "); got != want {
			t.Errorf("events %q, want %q", got, want)
		}
		text, err := stream.Text()
		if err != nil || text != "42" {
			t.Errorf("text %q, %v", text, err)
		}
	})
}
