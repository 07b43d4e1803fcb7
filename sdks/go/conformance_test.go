package agentry_test

// The Go runner of the cross-SDK conformance scenario (tools/conformance/scenario.json, format in
// tools/conformance/README.md), against a live service started by tools/conformance/serve.ts.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
)

type launcherInfo struct {
	BaseURL    string            `json:"baseURL"`
	ControlURL string            `json:"controlURL"`
	Keys       map[string]string `json:"keys"`
	Scenario   string            `json:"scenario"`
}

type clientSpec struct {
	Key             *string  `json:"key"`
	APIKey          *string  `json:"apiKey"`
	MaxRetries      *int     `json:"maxRetries"`
	MaxRetryDelayMs *float64 `json:"maxRetryDelayMs"`
	TimeoutMs       *float64 `json:"timeoutMs"`
}

type step struct {
	Name    string         `json:"name"`
	Client  string         `json:"client"`
	Call    string         `json:"call"`
	Args    map[string]any `json:"args"`
	Control string         `json:"control"`
	Body    any            `json:"body"`
	Expect  map[string]any `json:"expect"`
	Save    string         `json:"save"`
}

type scenario struct {
	Clients map[string]any `json:"clients"`
	Steps   []step         `json:"steps"`
}

// lockedBuffer collects the launcher's stderr, written by exec's goroutine and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLauncher spawns the launcher from the repository root and reads its one JSON line. Closing its stdin
// stops it; if this process dies first, the pipe closes and it stops anyway.
func startLauncher(t *testing.T) (launcherInfo, map[string]any) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "--import", "tsx", "tools/conformance/serve.ts")
	cmd.Dir = root
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the launcher (node --import tsx tools/conformance/serve.ts in %s): %v", root, err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(90 * time.Second):
		t.Fatalf("the launcher printed nothing in 90 s: %s", stderr.String())
	}
	var info launcherInfo
	var raw map[string]any
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("the launcher's first line is not its JSON (%v): %q %s", err, line, stderr.String())
	}
	_ = json.Unmarshal([]byte(line), &raw)
	return info, raw
}

func TestConformance(t *testing.T) {
	info, raw := startLauncher(t)
	data, err := os.ReadFile(info.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	run := &scenarioRun{info: info, scenario: sc, vars: map[string]any{"launcher": raw}}
	for i, st := range sc.Steps {
		if !t.Run(st.Name, func(t *testing.T) { run.step(t, st) }) {
			names := make([]string, 0, len(sc.Steps)-i-1)
			for _, rest := range sc.Steps[i+1:] {
				names = append(names, rest.Name)
			}
			t.Fatalf("step %q failed; not run, as they depend on it: %s", st.Name, strings.Join(names, "; "))
		}
	}
}

type scenarioRun struct {
	info     launcherInfo
	scenario scenario
	vars     map[string]any
}

func (r *scenarioRun) step(t *testing.T, st step) {
	ctx := context.Background()
	if st.Control != "" {
		body, err := resolve(st.Body, r.vars)
		if err != nil {
			t.Fatal(err)
		}
		if body == nil {
			body = map[string]any{}
		}
		encoded, _ := json.Marshal(body)
		resp, err := http.Post(r.info.ControlURL+"/"+st.Control, "application/json", bytes.NewReader(encoded))
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("control %s: %d %s", st.Control, resp.StatusCode, text)
		}
		return
	}
	name := st.Client
	if name == "" {
		name = "default"
	}
	rawSpec, ok := r.scenario.Clients[name]
	if !ok {
		t.Fatalf("unknown client %s", name)
	}
	resolvedSpec, err := resolve(rawSpec, r.vars)
	if err != nil {
		t.Fatal(err)
	}
	var spec clientSpec
	remarshal(t, resolvedSpec, &spec)
	opts := []agentry.Option{agentry.WithBaseURL(r.info.BaseURL)}
	if spec.Key != nil {
		opts = append(opts, agentry.WithAPIKey(r.info.Keys[*spec.Key]))
	} else if spec.APIKey != nil {
		opts = append(opts, agentry.WithAPIKey(*spec.APIKey))
	}
	if spec.MaxRetries != nil {
		opts = append(opts, agentry.WithMaxRetries(*spec.MaxRetries))
	}
	if spec.MaxRetryDelayMs != nil {
		opts = append(opts, agentry.WithMaxRetryDelay(milliseconds(*spec.MaxRetryDelayMs)))
	}
	if spec.TimeoutMs != nil {
		opts = append(opts, agentry.WithTimeout(milliseconds(*spec.TimeoutMs)))
	}
	client, err := agentry.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	expectAny, err := resolve(st.Expect, r.vars)
	if err != nil {
		t.Fatal(err)
	}
	expect, _ := expectAny.(map[string]any)
	argsAny, err := resolve(st.Args, r.vars)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := argsAny.(map[string]any)
	_, wantCount := expect["requests"]
	_, wantLog := expect["requestLog"]
	counting := (wantCount || wantLog) && spec.Key != nil
	var before requestCounts
	if counting {
		before = r.requestCounts(t, -1)
	}

	var result any
	var callErr error
	if st.Call == "agents.messages.stream" {
		result, callErr = streamOperation(ctx, client, args)
	} else {
		op, ok := operations[st.Call]
		if !ok {
			t.Fatalf("unknown operation %s", st.Call)
		}
		result, callErr = op(ctx, client, args)
	}
	var wireResult any
	if result != nil {
		wireResult = wire(t, result)
	}
	var wireError any
	if callErr != nil {
		wireError = errorForm(t, callErr)
	}

	var problems []string
	expectedError, wantError := expect["error"]
	switch {
	case !wantError && callErr != nil:
		problems = append(problems, fmt.Sprintf("unexpected error: %s", mustJSON(wireError)))
	case wantError && callErr == nil:
		problems = append(problems, "error: expected an error, the call succeeded")
	case wantError:
		if found := mismatch(expectedError, wireError, "error"); found != "" {
			problems = append(problems, found)
		}
	}
	if expected, ok := expect["result"]; ok {
		if found := mismatch(expected, wireResult, "result"); found != "" {
			problems = append(problems, found)
		}
	}
	if expected, ok := expect["rateLimit"]; ok {
		var state any
		if rl := client.LastRateLimit(); rl != nil {
			state = map[string]any{
				"limit":     float64(rl.Limit),
				"remaining": float64(rl.Remaining),
				"reset":     float64(rl.Reset.Unix()),
			}
		}
		if found := mismatch(expected, state, "rateLimit"); found != "" {
			problems = append(problems, found)
		}
	}
	if counting {
		after := r.requestCounts(t, before.Total)
		made := after.ByKey[*spec.Key] - before.ByKey[*spec.Key]
		if want, ok := expect["requests"].(float64); ok && float64(made) != want {
			problems = append(problems, fmt.Sprintf("requests: expected %v, the server saw %d", want, made))
		}
		if expected, ok := expect["requestLog"]; ok {
			log := []any{}
			for _, entry := range after.Log {
				if entry["key"] == *spec.Key {
					log = append(log, entry)
				}
			}
			if found := mismatch(expected, log, "requestLog"); found != "" {
				problems = append(problems, found)
			}
		}
	}
	if len(problems) > 0 {
		t.Fatalf("step %q:\n  %s", st.Name, strings.Join(problems, "\n  "))
	}
	if st.Save != "" {
		r.vars[st.Save] = wireResult
	}
}

// requestCounts is the launcher's GET /requests: counts per key, and with ?after=n the log after the n-th.
type requestCounts struct {
	Total int              `json:"total"`
	ByKey map[string]int   `json:"byKey"`
	Log   []map[string]any `json:"log"`
}

// requestCounts reads the launcher's request counts; with after >= 0, also its log of the requests since then.
func (r *scenarioRun) requestCounts(t *testing.T, after int) requestCounts {
	t.Helper()
	url := r.info.ControlURL + "/requests"
	if after >= 0 {
		url += fmt.Sprintf("?after=%d", after)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var counts requestCounts
	if err := json.NewDecoder(resp.Body).Decode(&counts); err != nil {
		t.Fatal(err)
	}
	return counts
}

// withOwnKey adds the caller's own Idempotency-Key to a call's options, when the step's args give one.
func withOwnKey(args map[string]any, opts []agentry.Option) []agentry.Option {
	if key, ok := args["idempotencyKey"].(string); ok {
		return append(opts, agentry.WithIdempotencyKey(key))
	}
	return opts
}

func milliseconds(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

type operation func(ctx context.Context, c *agentry.Client, args map[string]any) (any, error)

// operations maps the scenario's operation names to this SDK's calls; results are turned into wire form later.
var operations = map[string]operation{
	"agents.create": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.CreateAgentParams
		raw := typedFields(a["body"], &params)
		return c.Agents.Create(ctx, params, withOwnKey(a, raw)...)
	},
	"agents.get": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Get(ctx, a["agentId"].(string))
	},
	"agents.update": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.UpdateAgentParams
		raw := typedFields(a["body"], &params)
		return c.Agents.Update(ctx, a["agentId"].(string), params, withOwnKey(a, raw)...)
	},
	"agents.delete": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Delete(ctx, a["agentId"].(string), withOwnKey(a, nil)...)
	},
	"agents.list": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		page, err := c.Agents.List(ctx, listParams(a["query"]))
		if err != nil {
			return nil, err
		}
		return map[string]any{"data": page.Data, "pagination": page.Pagination, "hasNextPage": page.HasNextPage()}, nil
	},
	"agents.listPages": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		page, err := c.Agents.List(ctx, listParams(a["query"]))
		if err != nil {
			return nil, err
		}
		pages := []any{page}
		for page.HasNextPage() {
			if page, err = page.NextPage(ctx); err != nil {
				return nil, err
			}
			pages = append(pages, page)
		}
		return pages, nil
	},
	"agents.listAll": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		agents := []agentry.Agent{}
		for agent, err := range c.Agents.ListAll(ctx, listParams(a["query"])) {
			if err != nil {
				return nil, err
			}
			agents = append(agents, agent)
		}
		return agents, nil
	},
	"agents.messages.send": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.SendMessageParams
		raw := typedFields(a["body"], &params)
		return c.Agents.Messages.Send(ctx, a["agentId"].(string), params, withOwnKey(a, raw)...)
	},
	"agents.messages.streamText": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.SendMessageParams
		raw := typedFields(a["body"], &params)
		stream := c.Agents.Messages.Stream(ctx, a["agentId"].(string), params, withOwnKey(a, raw)...)
		defer stream.Close()
		text, err := stream.Text()
		if err != nil {
			return nil, err
		}
		return text, nil
	},
	"agents.messages.streamFinalMessage": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.SendMessageParams
		raw := typedFields(a["body"], &params)
		stream := c.Agents.Messages.Stream(ctx, a["agentId"].(string), params, withOwnKey(a, raw)...)
		defer stream.Close()
		return stream.FinalMessage()
	},
	"apiKeys.create": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.CreateAPIKeyParams
		raw := typedFields(a["body"], &params)
		return c.APIKeys.Create(ctx, params, withOwnKey(a, raw)...)
	},
	"apiKeys.list": func(ctx context.Context, c *agentry.Client, _ map[string]any) (any, error) {
		return c.APIKeys.List(ctx)
	},
	"apiKeys.revoke": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.APIKeys.Revoke(ctx, a["keyId"].(string), withOwnKey(a, nil)...)
	},
	"agents.messages.list": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.ListMessagesParams](a["query"])
		if err != nil {
			return nil, err
		}
		return firstCursorPage(c.Agents.Messages.List(ctx, a["agentId"].(string), params))
	},
	"agents.messages.listAll": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.ListMessagesParams](a["query"])
		if err != nil {
			return nil, err
		}
		return collectAll(c.Agents.Messages.ListAll(ctx, a["agentId"].(string), params))
	},
	"agents.messages.get": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Messages.Get(ctx, a["agentId"].(string), a["messageId"].(string))
	},
	"agents.messages.sendBackground": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.SendMessageParams
		raw := typedFields(a["body"], &params)
		return c.Agents.Messages.SendBackground(ctx, a["agentId"].(string), params, withOwnKey(a, raw)...)
	},
	"agents.messages.getBackground": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Messages.GetBackground(ctx, a["agentId"].(string), a["messageId"].(string))
	},
	"agents.messages.waitForBackground": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Messages.WaitForBackground(ctx, a["agentId"].(string), a["messageId"].(string),
			agentry.WithPollInterval(50*time.Millisecond), agentry.WithMaxWait(30*time.Second))
	},
	"agents.conversations.list": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.ListConversationsParams](a["query"])
		if err != nil {
			return nil, err
		}
		return firstCursorPage(c.Agents.Conversations.List(ctx, a["agentId"].(string), params))
	},
	"agents.conversations.listAll": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.ListConversationsParams](a["query"])
		if err != nil {
			return nil, err
		}
		return collectAll(c.Agents.Conversations.ListAll(ctx, a["agentId"].(string), params))
	},
	"agents.conversations.delete": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Conversations.Delete(ctx, a["agentId"].(string), a["conversationId"].(string), withOwnKey(a, nil)...)
	},
	// The export's result is what the iterator yielded, even when it ends in an error.
	"users.export": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return collectAll(c.Users.Export(ctx, a["userId"].(string)))
	},
	"users.erase": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Users.Erase(ctx, a["userId"].(string), withOwnKey(a, nil)...)
	},
	"usage.get": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.GetUsageParams](a["query"])
		if err != nil {
			return nil, err
		}
		return c.Usage.Get(ctx, params)
	},
	"agents.usage.get": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.GetAgentUsageParams](a["query"])
		if err != nil {
			return nil, err
		}
		return c.Agents.Usage.Get(ctx, a["agentId"].(string), params)
	},
	"agents.importCharacter": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		character, _ := a["body"].(map[string]any)
		if dryRun, _ := a["dryRun"].(bool); dryRun {
			return c.Agents.ImportCharacterDryRun(ctx, character, agentry.ImportCharacterDryRunParams{}, withOwnKey(a, nil)...)
		}
		return c.Agents.ImportCharacter(ctx, character, agentry.ImportCharacterParams{}, withOwnKey(a, nil)...)
	},
	"agents.exportCharacter": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.ExportCharacter(ctx, a["agentId"].(string))
	},
	"webhookEndpoints.create": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.CreateWebhookParams
		raw := typedFields(a["body"], &params)
		return c.WebhookEndpoints.Create(ctx, params, withOwnKey(a, raw)...)
	},
	"webhookEndpoints.list": func(ctx context.Context, c *agentry.Client, _ map[string]any) (any, error) {
		return c.WebhookEndpoints.List(ctx)
	},
	"webhookEndpoints.get": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.WebhookEndpoints.Get(ctx, a["webhookId"].(string))
	},
	"webhookEndpoints.update": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.UpdateWebhookParams
		raw := typedFields(a["body"], &params)
		return c.WebhookEndpoints.Update(ctx, a["webhookId"].(string), params, withOwnKey(a, raw)...)
	},
	"webhookEndpoints.delete": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.WebhookEndpoints.Delete(ctx, a["webhookId"].(string), withOwnKey(a, nil)...)
	},
	"webhookEndpoints.rotateSecret": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.WebhookEndpoints.RotateSecret(ctx, a["webhookId"].(string), withOwnKey(a, nil)...)
	},
	"webhookEndpoints.sendTestEvent": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.WebhookEndpoints.SendTestEvent(ctx, a["webhookId"].(string), withOwnKey(a, nil)...)
	},
	"webhookEndpoints.deliveries.list": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.ListWebhookDeliveriesParams](a["query"])
		if err != nil {
			return nil, err
		}
		return firstCursorPage(c.WebhookEndpoints.Deliveries.List(ctx, a["webhookId"].(string), params))
	},
	"webhookEndpoints.deliveries.listAll": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		params, err := queryParams[agentry.ListWebhookDeliveriesParams](a["query"])
		if err != nil {
			return nil, err
		}
		return collectAll(c.WebhookEndpoints.Deliveries.ListAll(ctx, a["webhookId"].(string), params))
	},
	"webhookEndpoints.deliveries.redeliver": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.WebhookEndpoints.Deliveries.Redeliver(ctx, a["webhookId"].(string), a["deliveryId"].(string), withOwnKey(a, nil)...)
	},
	"plugins.list": func(ctx context.Context, c *agentry.Client, _ map[string]any) (any, error) {
		return c.Plugins.List(ctx)
	},
	"agents.secrets.set": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		var params agentry.PutSecretParams
		raw := typedFields(a["body"], &params)
		return c.Agents.Secrets.Set(ctx, a["agentId"].(string), a["name"].(string), params, withOwnKey(a, raw)...)
	},
	"agents.secrets.list": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Secrets.List(ctx, a["agentId"].(string))
	},
	"agents.secrets.delete": func(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
		return c.Agents.Secrets.Delete(ctx, a["agentId"].(string), a["name"].(string), withOwnKey(a, nil)...)
	},
}

// queryParams decodes a scenario query (the API's names and JSON values) into an SDK parameter struct, whose
// field names are the query's names spelled the Go way.
func queryParams[T any](query any) (T, error) {
	var params T
	if query == nil {
		return params, nil
	}
	encoded, err := json.Marshal(query)
	if err != nil {
		return params, err
	}
	decoder := json.NewDecoder(bytes.NewReader(encoded))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&params); err != nil {
		return params, fmt.Errorf("the scenario's query does not fit %T: %w", params, err)
	}
	return params, nil
}

// firstCursorPage is a cursor page in the scenario's form of a first page.
func firstCursorPage[T any](page *agentry.CursorPage[T], err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": page.Data, "pagination": page.Pagination, "hasNextPage": page.HasNextPage()}, nil
}

// collectAll is every item an iterator yields until it ends, and the error it ends with, if any.
func collectAll[T any](items iter.Seq2[T, error]) (any, error) {
	all := []T{}
	for item, err := range items {
		if err != nil {
			return all, err
		}
		all = append(all, item)
	}
	return all, nil
}

// streamOperation iterates a stream; its result is what was received before it ended, even in an error.
func streamOperation(ctx context.Context, c *agentry.Client, a map[string]any) (any, error) {
	var params agentry.SendMessageParams
	raw := typedFields(a["body"], &params)
	stream := c.Agents.Messages.Stream(ctx, a["agentId"].(string), params, withOwnKey(a, raw)...)
	defer stream.Close()
	events := []any{}
	var text strings.Builder
	for stream.Next() {
		var data any
		switch event := stream.Current().(type) {
		case *agentry.MessageStartedEvent:
			data = event.Data
		case *agentry.MessageDeltaEvent:
			data = event.Data
			text.WriteString(event.Data.Text)
		case *agentry.ToolCallEvent:
			data = event.Data
		case *agentry.ToolResultEvent:
			data = event.Data
		case *agentry.MessageCompletedEvent:
			data = event.Data
		}
		event := stream.Current()
		events = append(events, map[string]any{"type": event.EventName(), "id": event.EventID(), "data": data})
	}
	return map[string]any{"events": events, "text": text.String()}, stream.Err()
}

// typedFields decodes each field of a JSON body into params when it fits the SDK's type, and sends the others
// as they are with WithBodyField: the scenario also sends invalid bodies, which typed parameters cannot hold.
func typedFields(body any, params any) []agentry.Option {
	fields, _ := body.(map[string]any)
	var raw []agentry.Option
	keys := make([]string, 0, len(fields))
	for key := range fields {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		encoded, _ := json.Marshal(map[string]any{key: fields[key]})
		trial := reflect.New(reflect.TypeOf(params).Elem()).Interface()
		decoder := json.NewDecoder(bytes.NewReader(encoded))
		decoder.DisallowUnknownFields()
		if decoder.Decode(trial) != nil || !roundTrips(trial, key, fields[key]) {
			raw = append(raw, agentry.WithBodyField(key, fields[key]))
			continue
		}
		_ = json.Unmarshal(encoded, params)
	}
	return raw
}

// roundTrips says whether the typed field encodes back to the value (a field the SDK hides, such as
// "stream", decodes without error yet would not be sent).
func roundTrips(typed any, key string, value any) bool {
	encoded, err := json.Marshal(typed)
	if err != nil {
		return false
	}
	var back map[string]any
	_ = json.Unmarshal(encoded, &back)
	got, ok := back[key]
	return ok && reflect.DeepEqual(normalize(got), normalize(value))
}

func normalize(v any) any {
	encoded, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(encoded, &out)
	return out
}

func listParams(query any) agentry.ListAgentsParams {
	var params agentry.ListAgentsParams
	fields, _ := query.(map[string]any)
	if v, ok := fields["page"].(float64); ok {
		params.Page = agentry.Int(int(v))
	}
	if v, ok := fields["limit"].(float64); ok {
		params.Limit = agentry.Int(int(v))
	}
	if v, ok := fields["status"].(string); ok {
		params.Status = agentry.Ptr(agentry.AgentStatus(v))
	}
	if v, ok := fields["sortBy"].(string); ok {
		params.SortBy = agentry.Ptr(agentry.SortBy(v))
	}
	if v, ok := fields["order"].(string); ok {
		params.Order = agentry.Ptr(agentry.SortOrder(v))
	}
	return params
}

// errorForm is an SDK error in the scenario's wire form. The Go SDK's error values map to the scenario's class
// names: *APIError by its status family (errors.Is with ErrBadRequest, ...), *ConnectionError, and the
// context's errors for a call the caller cancelled.
func errorForm(t *testing.T, err error) map[string]any {
	form := map[string]any{
		"status": nil, "code": nil, "message": err.Error(), "requestId": nil, "details": nil, "retryAfter": nil,
	}
	var apiErr *agentry.APIError
	var connErr *agentry.ConnectionError
	switch {
	case errors.As(err, &apiErr):
		form["type"] = "APIError"
		for _, family := range []struct {
			sentinel error
			name     string
		}{
			{agentry.ErrBadRequest, "BadRequestError"},
			{agentry.ErrAuthentication, "AuthenticationError"},
			{agentry.ErrPermissionDenied, "PermissionDeniedError"},
			{agentry.ErrNotFound, "NotFoundError"},
			{agentry.ErrConflict, "ConflictError"},
			{agentry.ErrRateLimit, "RateLimitError"},
			{agentry.ErrInternalServer, "InternalServerError"},
		} {
			if errors.Is(err, family.sentinel) {
				form["type"] = family.name
			}
		}
		form["status"] = float64(apiErr.StatusCode)
		if apiErr.Code != "" {
			form["code"] = string(apiErr.Code)
		}
		form["message"] = apiErr.Message
		if apiErr.RequestID != "" {
			form["requestId"] = apiErr.RequestID
		}
		if apiErr.Details != nil {
			form["details"] = wire(t, apiErr.Details)
		}
		if apiErr.RetryAfterSet() {
			form["retryAfter"] = apiErr.RetryAfter.Seconds()
		}
	case errors.As(err, &connErr):
		form["type"] = "APIConnectionError"
		if errors.Is(err, agentry.ErrTimeout) {
			form["type"] = "APITimeoutError"
		}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		form["type"] = "APIUserAbortError"
	case errors.Is(err, agentry.ErrOtherAnswerType):
		// The SDK refused the answer itself: the scenario's base error.
		form["type"] = "AgentryError"
	default:
		t.Fatalf("not an error of the SDK: %T %v", err, err)
	}
	return form
}

// wire is a value in the REST API's JSON form, as generic JSON.
func wire(t *testing.T, v any) any {
	encoded, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(encoded, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func remarshal(t *testing.T, from, to any) {
	encoded, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(encoded, to); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) string {
	encoded, _ := json.Marshal(v)
	return string(encoded)
}

var reference = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*$`)

// resolve replaces every string value "$name.path" by the value it names; keys are left alone.
func resolve(value any, vars map[string]any) (any, error) {
	switch v := value.(type) {
	case string:
		if !reference.MatchString(v) {
			return v, nil
		}
		var current any = vars
		for _, part := range strings.Split(v[1:], ".") {
			switch c := current.(type) {
			case map[string]any:
				next, ok := c[part]
				if !ok {
					return nil, fmt.Errorf("unresolved reference %s", v)
				}
				current = next
			case []any:
				var index int
				if _, err := fmt.Sscanf(part, "%d", &index); err != nil || index < 0 || index >= len(c) {
					return nil, fmt.Errorf("unresolved reference %s", v)
				}
				current = c[index]
			default:
				return nil, fmt.Errorf("unresolved reference %s", v)
			}
		}
		return current, nil
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			resolved, err := resolve(item, vars)
			if err != nil {
				return nil, err
			}
			out[i] = resolved
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			resolved, err := resolve(item, vars)
			if err != nil {
				return nil, err
			}
			out[key] = resolved
		}
		return out, nil
	}
	return value, nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

func isOperatorObject(pattern map[string]any) bool {
	if len(pattern) == 0 {
		return false
	}
	for key := range pattern {
		if !strings.HasPrefix(key, "$") {
			return false
		}
	}
	return true
}

// mismatch says where actual fails to match pattern (README, "Patterns"), or "" when it matches.
func mismatch(pattern, actual any, path string) string {
	fail := func(what string) string { return fmt.Sprintf("%s: %s, got %s", path, what, mustJSON(actual)) }
	switch p := pattern.(type) {
	case nil:
		if actual != nil {
			return fail("expected null")
		}
		return ""
	case []any:
		items, ok := actual.([]any)
		if !ok {
			return fail("expected an array")
		}
		if len(items) != len(p) {
			return fail(fmt.Sprintf("expected %d items", len(p)))
		}
		for i := range p {
			if found := mismatch(p[i], items[i], fmt.Sprintf("%s[%d]", path, i)); found != "" {
				return found
			}
		}
		return ""
	case map[string]any:
		if isOperatorObject(p) {
			return operators(p, actual, path, fail)
		}
		object, ok := actual.(map[string]any)
		if !ok {
			return fail("expected an object")
		}
		keys := make([]string, 0, len(p))
		for key := range p {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			if found := mismatch(p[key], object[key], path+"."+key); found != "" {
				return found
			}
		}
		return ""
	}
	if !reflect.DeepEqual(pattern, actual) {
		return fail(fmt.Sprintf("expected %s", mustJSON(pattern)))
	}
	return ""
}

func operators(p map[string]any, actual any, path string, fail func(string) string) string {
	for op, operand := range p {
		switch op {
		case "$regex":
			s, ok := actual.(string)
			if !ok || !regexp.MustCompile(operand.(string)).MatchString(s) {
				return fail(fmt.Sprintf("expected /%s/", operand))
			}
		case "$type":
			kind := jsonType(actual)
			if kind != operand && !(operand == "number" && kind == "integer") {
				return fail(fmt.Sprintf("expected %s", operand))
			}
		case "$gte", "$lte", "$gt", "$lt":
			n, ok := actual.(float64)
			bound := operand.(float64)
			holds := ok && map[string]bool{"$gte": n >= bound, "$lte": n <= bound, "$gt": n > bound, "$lt": n < bound}[op]
			if !holds {
				return fail(fmt.Sprintf("expected %s %v", op, bound))
			}
		case "$length":
			length := -1
			switch a := actual.(type) {
			case []any:
				length = len(a)
			case string:
				length = len([]rune(a))
			}
			if float64(length) != operand.(float64) {
				return fail(fmt.Sprintf("expected length %v", operand))
			}
		case "$contains":
			items, ok := actual.([]any)
			if !ok {
				return fail("expected an array")
			}
			for _, wanted := range operand.([]any) {
				found := false
				for _, item := range items {
					if mismatch(wanted, item, path) == "" {
						found = true
						break
					}
				}
				if !found {
					return fail(fmt.Sprintf("expected an item matching %s", mustJSON(wanted)))
				}
			}
		default:
			return fmt.Sprintf("%s: unknown operator %s", path, op)
		}
	}
	return ""
}

// The matcher must be able to fail, or the scenario would pass whatever the SDK did.
func TestPatternMatcher(t *testing.T) {
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		pattern, actual string
		match           bool
	}{
		{`1`, `1.0`, true},
		{`"a"`, `"b"`, false},
		{`null`, `null`, true},
		{`null`, `0`, false},
		{`{"a":null}`, `{}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, true},
		{`{"a":1}`, `{"b":1}`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`{"$regex":"^agt_"}`, `"agt_1"`, true},
		{`{"$regex":"^agt_"}`, `"msg_1"`, false},
		{`{"$type":"integer"}`, `1.5`, false},
		{`{"$type":"number"}`, `1`, true},
		{`{"$gte":1,"$lte":60}`, `61`, false},
		{`{"$length":2}`, `[1,2]`, true},
		{`{"$contains":[{"f":"x"}]}`, `[{"f":"y"},{"f":"x","g":1}]`, true},
		{`{"$contains":[{"f":"z"}]}`, `[{"f":"y"}]`, false},
		{`{"$nope":1}`, `1`, false},
	}
	for _, c := range cases {
		if got := mismatch(parse(c.pattern), parse(c.actual), "$") == ""; got != c.match {
			t.Errorf("%s against %s: match %v, want %v", c.pattern, c.actual, got, c.match)
		}
	}
	vars := map[string]any{"agent": map[string]any{"id": "agt_1", "tags": []any{"x", "y"}}}
	if got, err := resolve(map[string]any{"$k": "$agent.tags.1", "id": "$agent.id"}, vars); err != nil ||
		fmt.Sprint(got) != "map[$k:y id:agt_1]" {
		t.Errorf("resolve: %v %v", got, err)
	}
	if _, err := resolve("$agent.missing", vars); err == nil {
		t.Error("an unresolvable reference is an error")
	}
}
