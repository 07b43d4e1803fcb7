package agentry_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
)

const usageFigures = `"messages":3,"errors":1,"inputTokens":40,"outputTokens":12,"totalTokens":52,"costUsd":0.0012,` +
	`"latencyMs":{"p50":812.5,"p95":2210},"timeToFirstTokenMs":{"p50":null,"p95":null}`

const usageReport = `{"from":"2026-11-24T00:00:00.000Z","to":"2026-11-25T00:00:00.000Z","granularity":"day",` +
	`"groupBy":["agentId","model"],"buckets":[{"start":"2026-11-24T00:00:00.000Z","end":"2026-11-25T00:00:00.000Z",` +
	`"groups":[{"agentId":"agt_1","model":"gpt-4o-mini",` + usageFigures + `}]}],` +
	`"totals":{` + usageFigures + `,"groups":[{"agentId":"agt_1","model":"gpt-4o-mini",` + usageFigures + `}]}}`

func TestUsage(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, `{"success":true,"data":`+usageReport+`}`)
	})
	c := s.client(t)
	from := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	report, err := c.Usage.Get(ctx, agentry.GetUsageParams{
		From:        &from,
		Granularity: agentry.Ptr(agentry.GranularityDay),
		GroupBy:     []agentry.UsageDimension{agentry.UsageDimensionAgentID, agentry.UsageDimensionModel},
		AgentID:     agentry.String("agt_1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"from": "2026-11-24T00:00:00Z", "granularity": "day", "groupBy": "agentId,model", "agentId": "agt_1"}
	if got := queryOf(t, s.request(0).query); !equalMaps(got, want) || s.request(0).path != "/v1/usage" {
		t.Fatalf("request %v %s", got, s.request(0).path)
	}
	group := report.Buckets[0].Groups[0]
	if id, _ := group.AgentID.Get(); id != "agt_1" || group.Messages != 3 || group.Errors != 1 {
		t.Fatalf("group %+v", group)
	}
	if p50 := group.LatencyMs.P50; p50 == nil || *p50 != 812.5 || group.TimeToFirstTokenMs.P95 != nil {
		t.Fatalf("percentiles %+v %+v", group.LatencyMs, group.TimeToFirstTokenMs)
	}
	if report.Totals.TotalTokens != 52 || len(report.Totals.Groups) != 1 || !report.To.Equal(from.AddDate(0, 0, 1)) {
		t.Fatalf("report %+v", report)
	}
	if !reflect.DeepEqual(report.GroupBy, []agentry.UsageDimension{"agentId", "model"}) {
		t.Fatalf("groupBy %v", report.GroupBy)
	}
	var back, sent any
	encoded, _ := json.Marshal(report)
	_ = json.Unmarshal(encoded, &back)
	_ = json.Unmarshal([]byte(usageReport), &sent)
	if !reflect.DeepEqual(normalizeTimes(back), normalizeTimes(sent)) {
		t.Fatalf("round trip:\n%s\n%s", encoded, usageReport)
	}

	if _, err := c.Agents.Usage.Get(ctx, "agt_1", agentry.GetAgentUsageParams{GroupBy: []agentry.UsageDimension{}}); err != nil {
		t.Fatal(err)
	}
	if req := s.request(1); req.path != "/v1/agents/agt_1/usage" || req.query != "" {
		t.Fatalf("an empty groupBy is left out: %+v", req)
	}
}

// normalizeTimes rewrites RFC 3339 strings with their fraction of a second removed, as Go writes them.
func normalizeTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = normalizeTimes(item)
		}
	case []any:
		for i, item := range v {
			v[i] = normalizeTimes(item)
		}
	case string:
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return at.UTC().Format(time.RFC3339Nano)
		}
	}
	return v
}

const characterFile = `{"name":"Eliza","bio":"A bot.","lore":["Grew up in a library"],"knowledge":["fact",{"path":"docs/a.md"}],` +
	`"plugins":["@elizaos/plugin-sql"],"settings":{"secrets":{"KEY":"sk-hidden"},"voice":"soft"}}`

const exportedFile = `{"name":"Eliza","bio":["A bot."],"style":{"all":["rhyme"],"tone":"warm"},` +
	`"messageExamples":[[{"name":"{{user1}}","content":{"text":"Hi"}},{"name":"Eliza","content":{"text":"Hello!"}}]],` +
	`"knowledge":["fact",{"path":"docs/a.md"},{"directory":{"path":"notes"},"shared":true}],` +
	`"plugins":["@elizaos/plugin-sql"],"settings":{"voice":"soft","secrets":{},"agentry":{"personality":{"lore":["x"]}}},` +
	`"secrets":{}}`

const warnings = `[{"field":"knowledge[1]","issue":"kept, not read"}]`

func TestCharacterFiles(t *testing.T) {
	ctx := context.Background()
	draft := strings.NewReplacer(`"id":"agt_1",`, "", `"status":"active",`, "", `"statusReason":null,`, "").Replace(agentJSON)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case r.URL.Path == "/v1/agents/agt_1/character":
			writeJSON(w, 200, exportedFile)
		case r.URL.Query().Get("dryRun") == "true" && n == 2:
			writeError(w, 503, "AGENT_UNAVAILABLE")
		case r.URL.Query().Get("dryRun") == "true":
			writeJSON(w, 200, `{"success":true,"data":`+draft+`,"warnings":`+warnings+`}`)
		case n == 4:
			writeError(w, 503, "AGENT_UNAVAILABLE")
		default:
			writeJSON(w, 201, `{"success":true,"data":`+agentJSON+`,"warnings":`+warnings+`}`)
		}
	})
	c := s.client(t)
	var file map[string]any
	if err := json.Unmarshal([]byte(characterFile), &file); err != nil {
		t.Fatal(err)
	}

	imported, err := c.Agents.ImportCharacter(ctx, file, agentry.ImportCharacterParams{})
	if err != nil {
		t.Fatal(err)
	}
	if imported.Agent.ID != "agt_1" || len(imported.Warnings) != 1 || imported.Warnings[0].Field != "knowledge[1]" {
		t.Fatalf("import %+v", imported)
	}
	var sent, given any
	_ = json.Unmarshal([]byte(s.request(0).body), &sent)
	_ = json.Unmarshal([]byte(characterFile), &given)
	if !reflect.DeepEqual(sent, given) || s.request(0).query != "" || s.request(0).path != "/v1/agents/import" {
		t.Fatalf("the file is sent as it is: %+v", s.request(0))
	}

	// A dry run stores nothing, so it is retried like a read.
	preview, err := c.Agents.ImportCharacterDryRun(ctx, file, agentry.ImportCharacterDryRunParams{})
	if err != nil {
		t.Fatal(err)
	}
	if preview.Agent.Name != "Ada" || len(preview.Warnings) != 1 || s.count() != 3 || s.request(2).query != "dryRun=true" {
		t.Fatalf("preview %+v after %d requests", preview, s.count())
	}
	encoded, _ := json.Marshal(preview)
	if strings.Contains(string(encoded), `"id"`) || !strings.Contains(string(encoded), `"agent":{"name":"Ada"`) {
		t.Fatalf("a preview has no id: %s", encoded)
	}
	// An import is retried like a read, under one Idempotency-Key.
	if _, err := c.Agents.ImportCharacter(ctx, file, agentry.ImportCharacterParams{}); err != nil || s.count() != 5 {
		t.Fatalf("import after a 503: %v, %d requests", err, s.count())
	}
	if key := s.request(3).header.Get("Idempotency-Key"); key == "" || s.request(4).header.Get("Idempotency-Key") != key {
		t.Fatalf("the retry's key: %q, %q", key, s.request(4).header.Get("Idempotency-Key"))
	}
	// UseDefaultModel asks for the server's default model, with or without a dry run.
	if _, err := c.Agents.ImportCharacterDryRun(ctx, file, agentry.ImportCharacterDryRunParams{UseDefaultModel: agentry.Bool(true)}); err != nil ||
		s.request(5).query != "dryRun=true&useDefaultModel=true" {
		t.Fatalf("a dry run with the default model: %v, %q", err, s.request(5).query)
	}
	if _, err := c.Agents.ImportCharacter(ctx, file, agentry.ImportCharacterParams{UseDefaultModel: agentry.Bool(true)}); err != nil ||
		s.request(6).query != "useDefaultModel=true" {
		t.Fatalf("an import with the default model: %v, %q", err, s.request(6).query)
	}

	// From a path: the file is read and sent as it is, numbers as written.
	dir := t.TempDir()
	path := filepath.Join(dir, "eliza.character.json")
	if err := os.WriteFile(path, []byte(characterFile), 0o600); err != nil {
		t.Fatal(err)
	}
	before := s.count()
	if imported, err := c.Agents.ImportCharacterFile(ctx, path, agentry.ImportCharacterParams{}); err != nil || imported.Agent.ID != "agt_1" {
		t.Fatalf("import from a file: %+v, %v", imported, err)
	}
	_ = json.Unmarshal([]byte(s.request(before).body), &sent)
	if !reflect.DeepEqual(sent, given) || s.request(before).path != "/v1/agents/import" || s.request(before).query != "" {
		t.Fatalf("the file is sent as it is: %+v", s.request(before))
	}
	if preview, err := c.Agents.ImportCharacterFileDryRun(ctx, path, agentry.ImportCharacterDryRunParams{}); err != nil || preview.Agent.Name != "Ada" ||
		s.request(before+1).query != "dryRun=true" {
		t.Fatalf("dry run from a file: %+v, %v", preview, err)
	}
	for name, contents := range map[string]string{"list.json": "[]", "broken.json": "{ name: Eliza", "null.json": "null", "two.json": "{} {}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(contents), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before = s.count()
	for _, name := range []string{"missing.json", "list.json", "broken.json", "null.json", "two.json"} {
		_, err := c.Agents.ImportCharacterFile(ctx, filepath.Join(dir, name), agentry.ImportCharacterParams{})
		var apiErr *agentry.APIError
		if err == nil || errors.As(err, &apiErr) || !strings.Contains(err.Error(), "character file") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.Agents.ImportCharacterFile(ctx, filepath.Join(dir, "missing.json"), agentry.ImportCharacterParams{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file says so: %v", err)
	}
	if s.count() != before {
		t.Errorf("nothing is sent for a file that is not a character file: %d requests", s.count()-before)
	}

	exported, err := c.Agents.ExportCharacter(ctx, "agt_1")
	if err != nil {
		t.Fatal(err)
	}
	if exported.Name != "Eliza" || len(exported.Settings.Secrets) != 0 || exported.Style.Extra["tone"] != "warm" {
		t.Fatalf("export %+v", exported)
	}
	if exported.Knowledge[0].OfString == nil || *exported.Knowledge[1].OfCharacterKnowledgeSource.Path != "docs/a.md" {
		t.Fatalf("knowledge %+v", exported.Knowledge)
	}
	if exported.MessageExamples[0][1].Content.Text == nil || *exported.MessageExamples[0][1].Content.Text != "Hello!" {
		t.Fatalf("examples %+v", exported.MessageExamples)
	}
	var back, original any
	encoded, _ = json.Marshal(exported)
	_ = json.Unmarshal(encoded, &back)
	_ = json.Unmarshal([]byte(exportedFile), &original)
	if !reflect.DeepEqual(back, original) {
		t.Fatalf("the export writes back as it was read:\n%s\n%s", encoded, exportedFile)
	}
}
