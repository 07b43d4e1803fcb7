// Package agentry is the Go client of the Agentry Agent Management API: create, configure, list, message and
// delete AI agents, and manage API keys.
//
//	client, err := agentry.NewClient() // AGENTRY_API_KEY, AGENTRY_BASE_URL
//	if err != nil {
//		log.Fatal(err)
//	}
//	agent, err := client.Agents.Create(ctx, agentry.CreateAgentParams{Name: "Ada", Bio: []string{"Counts things"}})
//	reply, err := client.Agents.Messages.Send(ctx, agent.ID, agentry.SendMessageParams{Text: "Hello!"})
//
// Every call takes a context first, and honours its cancellation and deadline, and per-call options last
// (WithMaxRetries, WithTimeout, WithHeader, WithIdempotencyKey, ...). Lists come a page at a time ([AgentService.List]) or as an
// iterator over every item ([AgentService.ListAll]); replies can be streamed ([AgentMessageService.Stream]).
//
// Failures are an [*APIError] (a response of the API; errors.Is tells its family: [ErrNotFound],
// [ErrRateLimit], ...), a [*ConnectionError] (no response; [ErrTimeout] when it timed out), or the context's
// error. Every write (POST, PATCH, DELETE) carries an Idempotency-Key, a new random one per call and the same
// on each of its retries, so the service runs it once; every call is therefore retried alike, on timeouts,
// connection failures, 408, 409 (not AGENT_INACTIVE), 429 and 5xx, with exponential backoff from 0.5 s to 8 s,
// or the server's Retry-After. A stream is never retried once it has started.
//
// Webhook deliveries are verified with [VerifyWebhook] or [UnwrapWebhook], which need the endpoint's secret
// and no client or API key.
//
// The models and operations (models_gen.go, services_gen.go) are generated from the API's OpenAPI document;
// the rest is written by hand.
package agentry
