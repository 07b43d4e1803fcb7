package agentry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	agentry "github.com/agentry/agentry-go"
)

func historyMessage(n int) string {
	return fmt.Sprintf(`{"id":"msg_%02d","agentId":"agt_1","conversationId":"conv_1","userId":"user-42","roomId":null,`+
		`"role":"user","text":"text %d","createdAt":"2026-11-20T09:30:%02d.000Z"}`, n, n, n)
}

func memoryLine(n int, source string) string {
	learnt := "null"
	if source != "" {
		learnt = fmt.Sprintf(`{"messageId":%q}`, source)
	}
	return fmt.Sprintf(`{"id":"mem_%02d","agentId":"agt_1","userId":"user-42","text":"fact %d","source":%s,`+
		`"createdAt":"2026-11-21T09:30:%02dZ"}`, n, n, learnt, n)
}

// lineID is the id of an export's line, a message's or a memory's.
func lineID(line agentry.UserExportLine) string {
	switch {
	case line.OfHistoryMessage != nil:
		return line.OfHistoryMessage.ID
	case line.OfMemory != nil:
		return line.OfMemory.ID
	}
	return "(neither)"
}

func cursorPage(hasMore bool, limit int, items ...string) string {
	return fmt.Sprintf(`{"success":true,"data":[%s],"pagination":{"limit":%d,"hasMore":%t}}`,
		strings.Join(items, ","), limit, hasMore)
}

func queryOf(t *testing.T, raw string) map[string]string {
	t.Helper()
	values, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name := range values {
		out[name] = values.Get(name)
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCursorPages(t *testing.T) {
	ctx := context.Background()

	t.Run("newest first, each next page is before the last item", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			switch n {
			case 1:
				writeJSON(w, 200, cursorPage(true, 2, historyMessage(4), historyMessage(3)))
			case 2:
				writeJSON(w, 200, cursorPage(true, 2, historyMessage(2), historyMessage(1)))
			default:
				writeJSON(w, 200, cursorPage(false, 2))
			}
		})
		c := s.client(t)
		page, err := c.Agents.Messages.List(ctx, "agt_1", agentry.ListMessagesParams{UserID: agentry.String("user-42"), Limit: agentry.Int(2)})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 2 || page.Data[0].ID != "msg_04" || page.NextCursor != "msg_03" || !page.HasNextPage() {
			t.Fatalf("first page: %+v", page)
		}
		if page.Pagination.Limit != 2 || !page.Pagination.HasMore {
			t.Fatalf("pagination: %+v", page.Pagination)
		}
		var ids []string
		for m, err := range page.All(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != "msg_04,msg_03,msg_02,msg_01" {
			t.Fatalf("all: %v", ids)
		}
		wants := []map[string]string{
			{"userId": "user-42", "limit": "2"},
			{"userId": "user-42", "limit": "2", "before": "msg_03"},
			{"userId": "user-42", "limit": "2", "before": "msg_01"},
		}
		for i, want := range wants {
			if got := queryOf(t, s.request(i).query); !equalMaps(got, want) {
				t.Errorf("request %d: %v, want %v", i, got, want)
			}
		}
		if s.request(0).path != "/v1/agents/agt_1/messages" {
			t.Errorf("path %s", s.request(0).path)
		}
	})

	t.Run("ListAll oldest first goes after the last item, and a page asked after a cursor goes on that way", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n%2 == 1 {
				writeJSON(w, 200, cursorPage(true, 2, historyMessage(5), historyMessage(6)))
			} else {
				writeJSON(w, 200, cursorPage(false, 2, historyMessage(7)))
			}
		})
		c := s.client(t)
		var ids []string
		for m, err := range c.Agents.Messages.ListAll(ctx, "agt_1", agentry.ListMessagesParams{Order: agentry.Ptr(agentry.SortOrderAsc), Limit: agentry.Int(2)}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != "msg_05,msg_06,msg_07" {
			t.Fatalf("all: %v", ids)
		}
		if got := queryOf(t, s.request(1).query); !equalMaps(got, map[string]string{"order": "asc", "limit": "2", "after": "msg_06"}) {
			t.Errorf("second page: %v", got)
		}
		// After a cursor, newest first: toward newer items, after the page's newest (first) item.
		page, err := c.Agents.Messages.List(ctx, "agt_1", agentry.ListMessagesParams{After: agentry.String("msg_04")})
		if err != nil {
			t.Fatal(err)
		}
		if page.NextCursor != "msg_05" {
			t.Fatalf("next cursor %q", page.NextCursor)
		}
		if _, err := page.NextPage(ctx); err != nil {
			t.Fatal(err)
		}
		if got := queryOf(t, s.request(3).query); !equalMaps(got, map[string]string{"after": "msg_05"}) {
			t.Errorf("next after a cursor: %v", got)
		}
	})

	t.Run("the last page, an empty page and a failing page end the iteration", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			switch n {
			case 1:
				writeJSON(w, 200, cursorPage(false, 20, historyMessage(1)))
			case 2:
				writeJSON(w, 200, cursorPage(true, 20))
			case 3:
				writeJSON(w, 200, cursorPage(true, 20, historyMessage(2)))
			default:
				writeError(w, 400, "INVALID_REQUEST")
			}
		})
		c := s.client(t)
		last, err := c.Agents.Messages.List(ctx, "agt_1", agentry.ListMessagesParams{})
		if err != nil {
			t.Fatal(err)
		}
		if last.HasNextPage() {
			t.Fatal("no next page after hasMore false")
		}
		if _, err := last.NextPage(ctx); !errors.Is(err, agentry.ErrNoNextPage) {
			t.Fatalf("NextPage on the last: %v", err)
		}
		empty, err := c.Agents.Messages.List(ctx, "agt_1", agentry.ListMessagesParams{})
		if err != nil || empty.HasNextPage() || empty.NextCursor != "" {
			t.Fatalf("empty page: %+v %v", empty, err)
		}
		var seen []string
		var failure error
		for m, err := range c.Agents.Messages.ListAll(ctx, "agt_1", agentry.ListMessagesParams{}, agentry.WithMaxRetries(0)) {
			if err != nil {
				failure = err
				break
			}
			seen = append(seen, m.ID)
		}
		if strings.Join(seen, ",") != "msg_02" || !errors.Is(failure, agentry.ErrBadRequest) {
			t.Fatalf("seen %v, failure %v", seen, failure)
		}
	})

	t.Run("conversations and the delivery log", func(t *testing.T) {
		conversation := `{"id":"conv_%d","agentId":"agt_1","userId":"u","roomId":null,"messageCount":2,` +
			`"createdAt":"2026-11-20T09:30:00.000Z","lastMessageAt":"2026-11-20T09:31:00.000Z"}`
		delivery := `{"id":"dlv_%d","eventId":"evt_1","eventType":"webhook.test","attempt":1,"status":"succeeded",` +
			`"responseStatus":204,"durationMs":5,"error":null,"createdAt":"2026-11-20T09:30:00.000Z","nextAttemptAt":null}`
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			item := conversation
			if strings.Contains(r.URL.Path, "deliveries") {
				item = delivery
			}
			writeJSON(w, 200, cursorPage(n%2 == 1, 1, fmt.Sprintf(item, 2-(n+1)%2)))
		})
		c := s.client(t)
		var conversations []string
		for conv, err := range c.Agents.Conversations.ListAll(ctx, "agt_1", agentry.ListConversationsParams{Limit: agentry.Int(1)}) {
			if err != nil {
				t.Fatal(err)
			}
			conversations = append(conversations, conv.ID)
		}
		var deliveries []string
		for d, err := range c.WebhookEndpoints.Deliveries.ListAll(ctx, "whk_1", agentry.ListWebhookDeliveriesParams{Limit: agentry.Int(1)}) {
			if err != nil {
				t.Fatal(err)
			}
			deliveries = append(deliveries, d.ID)
		}
		if strings.Join(conversations, ",") != "conv_2,conv_1" || strings.Join(deliveries, ",") != "dlv_2,dlv_1" {
			t.Fatalf("conversations %v, deliveries %v", conversations, deliveries)
		}
		if got := queryOf(t, s.request(1).query); !equalMaps(got, map[string]string{"limit": "1", "before": "conv_2"}) {
			t.Errorf("conversations' second page: %v", got)
		}
		if s.request(3).path != "/v1/webhooks/whk_1/deliveries" || !strings.Contains(s.request(3).query, "before=dlv_2") {
			t.Errorf("deliveries' second page: %+v", s.request(3))
		}
	})
}

func ndjsonHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Request-Id", "req_export")
}

func exportAll(c *agentry.Client, userID string) ([]string, error) {
	var ids []string
	for m, err := range c.Users.Export(context.Background(), userID) {
		if err != nil {
			return ids, err
		}
		ids = append(ids, lineID(m))
	}
	return ids, nil
}

func TestExport(t *testing.T) {
	t.Run("lines become messages, read as they arrive", func(t *testing.T) {
		release := make(chan struct{})
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			ndjsonHeaders(w)
			io.WriteString(w, historyMessage(1)+"\n")
			w.(http.Flusher).Flush()
			<-release
			io.WriteString(w, historyMessage(2)+"\r\n\n"+historyMessage(3)+"\n")
		})
		c := s.client(t)
		export := c.Users.Export(context.Background(), "user/42")
		if s.count() != 0 {
			t.Fatal("the request waits for the loop")
		}
		var ids []string
		for m, err := range export {
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) == 0 {
				// The first message arrives while the server still holds back the rest.
				close(release)
			}
			ids = append(ids, lineID(m))
		}
		if strings.Join(ids, ",") != "msg_01,msg_02,msg_03" {
			t.Fatalf("ids %v", ids)
		}
		req := s.request(0)
		if req.header.Get("Accept") != "application/x-ndjson" || req.path != "/v1/users/user/42/export" {
			t.Fatalf("request %+v", req)
		}
	})

	t.Run("the memories after the messages are read as memories", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			ndjsonHeaders(w)
			io.WriteString(w, historyMessage(1)+"\n"+historyMessage(2)+"\n"+memoryLine(1, "msg_01")+"\n"+memoryLine(2, "")+"\n")
		})
		var lines []agentry.UserExportLine
		for line, err := range s.client(t).Users.Export(context.Background(), "user-42") {
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, line)
		}
		if len(lines) != 4 {
			t.Fatalf("%d lines", len(lines))
		}
		for i, line := range lines[:2] {
			if line.OfHistoryMessage == nil || line.OfMemory != nil || line.OfHistoryMessage.ID != fmt.Sprintf("msg_%02d", i+1) {
				t.Fatalf("line %d is not its message: %+v", i, line)
			}
		}
		learnt, byHand := lines[2].OfMemory, lines[3].OfMemory
		if lines[2].OfHistoryMessage != nil || learnt == nil || learnt.ID != "mem_01" || learnt.Text != "fact 1" ||
			learnt.Source == nil || learnt.Source.MessageID != "msg_01" {
			t.Fatalf("the first memory: %+v", lines[2])
		}
		if byHand == nil || byHand.ID != "mem_02" || byHand.Source != nil {
			t.Fatalf("the memory added by hand: %+v", lines[3])
		}
		// A line encodes back to the JSON it came as.
		encoded, err := json.Marshal(lines[3])
		if err != nil || string(encoded) != memoryLine(2, "") {
			t.Fatalf("encoded %s, %v", encoded, err)
		}
	})

	t.Run("an empty body is no messages", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { ndjsonHeaders(w) })
		if ids, err := exportAll(s.client(t), "nobody"); err != nil || len(ids) != 0 {
			t.Fatalf("%v %v", ids, err)
		}
	})

	t.Run("a body cut short in the middle of a line fails after the whole lines", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			ndjsonHeaders(w)
			io.WriteString(w, historyMessage(1)+"\n"+historyMessage(2)[:20])
		})
		ids, err := exportAll(s.client(t), "user-42")
		var connErr *agentry.ConnectionError
		if strings.Join(ids, ",") != "msg_01" || !errors.As(err, &connErr) || !errors.Is(err, agentry.ErrCutShort) {
			t.Fatalf("ids %v, err %v", ids, err)
		}
		if s.count() != 1 {
			t.Fatalf("a started export is never retried: %d requests", s.count())
		}
	})

	t.Run("a connection dropped before the last chunk fails", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			body := historyMessage(1) + "\n" + historyMessage(2)[:30]
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
			buf.Flush()
		})
		ids, err := exportAll(s.client(t), "user-42")
		var connErr *agentry.ConnectionError
		if strings.Join(ids, ",") != "msg_01" || !errors.As(err, &connErr) {
			t.Fatalf("ids %v, err %v", ids, err)
		}
	})

	t.Run("an export silent for longer than the timeout fails", func(t *testing.T) {
		done := make(chan struct{})
		t.Cleanup(func() { close(done) })
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			ndjsonHeaders(w)
			io.WriteString(w, historyMessage(1)+"\n")
			w.(http.Flusher).Flush()
			select {
			case <-done:
			case <-r.Context().Done():
			}
		})
		ids, err := exportAll(s.client(t, agentry.WithTimeout(150*time.Millisecond)), "user-42")
		if strings.Join(ids, ",") != "msg_01" || !errors.Is(err, agentry.ErrTimeout) {
			t.Fatalf("ids %v, err %v", ids, err)
		}
	})

	t.Run("failures before it starts are retried as a read, then yielded", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				writeError(w, 503, "AGENT_UNAVAILABLE")
				return
			}
			if r.URL.Path == "/v1/users/bad/export" {
				writeError(w, 400, "INVALID_REQUEST")
				return
			}
			ndjsonHeaders(w)
			io.WriteString(w, historyMessage(1)+"\n")
		})
		c := s.client(t)
		if ids, err := exportAll(c, "user-42"); err != nil || len(ids) != 1 || s.count() != 2 {
			t.Fatalf("ids %v, err %v, %d requests", ids, err, s.count())
		}
		if _, err := exportAll(c, "bad"); !errors.Is(err, agentry.ErrBadRequest) {
			t.Fatalf("400: %v", err)
		}
		if _, err := exportAll(c, ""); err == nil || !strings.Contains(err.Error(), "userID") {
			t.Fatalf("an empty id: %v", err)
		}
	})

	t.Run("a line that is not JSON fails, and leaving the loop closes the connection", func(t *testing.T) {
		gone := make(chan struct{})
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			ndjsonHeaders(w)
			if n == 1 {
				io.WriteString(w, "not json\n")
				return
			}
			io.WriteString(w, historyMessage(1)+"\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(gone)
		})
		c := s.client(t)
		var apiErr *agentry.APIError
		if _, err := exportAll(c, "user-42"); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "not the JSON expected") {
			t.Fatalf("not JSON: %v", err)
		}
		for range c.Users.Export(context.Background(), "user-42") {
			break
		}
		waitGone(t, gone)
	})
}

func TestErase(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, `{"success":true,"data":{"userId":"user-42","deleted":true,"messagesDeleted":6}}`)
	})
	erased, err := s.client(t).Users.Erase(context.Background(), "user-42")
	if err != nil || erased.UserID != "user-42" || !erased.Deleted || erased.MessagesDeleted != 6 {
		t.Fatalf("%+v %v", erased, err)
	}
	if req := s.request(0); req.method != http.MethodDelete || req.path != "/v1/users/user-42" {
		t.Fatalf("%+v", req)
	}
}
