package agentry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	agentry "github.com/agentry/agentry-go"
)

func ExampleNewClient() {
	client, err := agentry.NewClient() // AGENTRY_API_KEY, AGENTRY_BASE_URL
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	agent, err := client.Agents.Create(ctx, agentry.CreateAgentParams{Name: "Ada", Bio: []string{"Counts things"}})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := client.Agents.Messages.Send(ctx, agent.ID, agentry.SendMessageParams{Text: "Hello!"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Text)
}

func ExampleAgentService_ListAll() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	params := agentry.ListAgentsParams{Limit: agentry.Int(50), SortBy: agentry.Ptr(agentry.SortByName)}
	for agent, err := range client.Agents.ListAll(context.Background(), params) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(agent.ID, agent.Name, agent.Status)
	}
}

func ExampleAgentMessageService_Stream() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	stream := client.Agents.Messages.Stream(context.Background(), "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
		agentry.SendMessageParams{Text: "Tell me a story", UserID: agentry.String("user-1")})
	defer stream.Close()
	for stream.Next() {
		if delta, ok := stream.Current().(*agentry.MessageDeltaEvent); ok {
			fmt.Print(delta.Data.Text)
		}
	}
	if err := stream.Err(); err != nil {
		log.Fatal(err)
	}
}

func ExampleAgentMessageService_WaitForBackground() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	agentID := "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1"
	accepted, err := client.Agents.Messages.SendBackground(ctx, agentID,
		agentry.SendMessageParams{Text: "Summarise the quarter"})
	if err != nil {
		log.Fatal(err)
	}
	message, err := client.Agents.Messages.WaitForBackground(ctx, agentID, accepted.ID,
		agentry.WithMaxWait(2*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	if message.Status == agentry.BackgroundMessageStatusCompleted {
		fmt.Println(*message.Text)
	} else {
		fmt.Println(message.Error.Code, message.Error.Message)
	}
}

func ExampleAgentService_Update() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	// Pause the agent and reset its model to the provider's default; other fields stay as they are.
	_, err = client.Agents.Update(context.Background(), "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1", agentry.UpdateAgentParams{
		Status: agentry.Ptr(agentry.AgentStatusInactive),
		Model:  agentry.Null[string](),
	})
	var apiErr *agentry.APIError
	switch {
	case errors.Is(err, agentry.ErrNotFound):
		fmt.Println("no such agent")
	case errors.As(err, &apiErr):
		fmt.Println(apiErr.StatusCode, apiErr.Code, apiErr.RequestID)
	case err != nil:
		log.Fatal(err)
	}
}

func ExampleUserService_Export() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	out := json.NewEncoder(os.Stdout)
	// Each line is a message (OfHistoryMessage) or, after the messages, a memory (OfMemory); either encodes back
	// to the JSON it came as.
	for line, err := range client.Users.Export(context.Background(), "user-42") {
		if errors.Is(err, agentry.ErrCutShort) {
			log.Fatal("the export broke off mid-line; export again")
		} else if err != nil {
			log.Fatal(err)
		}
		if err := out.Encode(line); err != nil {
			log.Fatal(err)
		}
	}
}

func ExampleUsageService_Get() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	from := time.Now().AddDate(0, 0, -1)
	report, err := client.Usage.Get(context.Background(), agentry.GetUsageParams{
		From:        &from,
		Granularity: agentry.Ptr(agentry.GranularityHour),
		GroupBy:     []agentry.UsageDimension{agentry.UsageDimensionAgentID, agentry.UsageDimensionModel},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, bucket := range report.Buckets {
		for _, group := range bucket.Groups {
			model, _ := group.Model.Get()
			fmt.Println(bucket.Start, model, group.Messages, group.TotalTokens)
		}
	}
}

func ExampleAgentService_ImportCharacter() {
	client, err := agentry.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	data, err := os.ReadFile("eliza.character.json")
	if err != nil {
		log.Fatal(err)
	}
	var character map[string]any
	if err := json.Unmarshal(data, &character); err != nil {
		log.Fatal(err)
	}
	preview, err := client.Agents.ImportCharacterDryRun(ctx, character, agentry.ImportCharacterDryRunParams{}) // nothing is stored
	if err != nil {
		log.Fatal(err)
	}
	for _, warning := range preview.Warnings {
		fmt.Printf("%s: %s\n", warning.Field, warning.Issue)
	}
	imported, err := client.Agents.ImportCharacter(ctx, character, agentry.ImportCharacterParams{})
	if err != nil {
		log.Fatal(err)
	}
	exported, err := client.Agents.ExportCharacter(ctx, imported.Agent.ID) // without secrets
	if err != nil {
		log.Fatal(err)
	}
	file, err := json.MarshalIndent(exported, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(file))
}

func ExampleUnwrapWebhook() {
	secret := os.Getenv("AGENTRY_WEBHOOK_SECRET") // whsec_...
	http.HandleFunc("POST /webhooks/agentry", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20)) // the raw bytes, as received
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		event, err := agentry.UnwrapWebhook(body, r.Header, secret)
		if errors.Is(err, agentry.ErrWebhookVerification) {
			http.Error(w, "invalid webhook", http.StatusBadRequest)
			return
		} else if err != nil { // the secret is not a whsec_ secret
			http.Error(w, "misconfigured", http.StatusInternalServerError)
			return
		}
		switch e := event.(type) {
		case *agentry.MessageCompletedWebhookEvent:
			fmt.Println(e.Data.AgentID, e.Data.Text)
		case *agentry.AgentStatusChangedWebhookEvent:
			fmt.Println(e.Data.ID, e.Data.Status)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	log.Fatal(http.ListenAndServe(":3000", nil))
}
