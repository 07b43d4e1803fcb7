package agentry

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Version is this SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

// Defaults of a client's settings.
const (
	// DefaultBaseURL is the address of a service started locally with its defaults.
	DefaultBaseURL = "http://localhost:8080/v1"
	// DefaultTimeout is how long one attempt may take: the API's recommended client timeout.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times a failed attempt is retried.
	DefaultMaxRetries = 2
	// DefaultMaxRetryDelay caps every wait before a retry: the length of the API's rate-limit window.
	DefaultMaxRetryDelay = 60 * time.Second
)

// Client is the Agentry API client. It is safe for concurrent use; create one and share it.
//
//	client, err := agentry.NewClient() // AGENTRY_API_KEY, AGENTRY_BASE_URL
//	agent, err := client.Agents.Create(ctx, agentry.CreateAgentParams{Name: "Ada"})
type Client struct {
	// Agents creates, lists, reads, updates and deletes agents, and imports and exports them as elizaOS character
	// files; Agents.Messages talks to them and reads their stored messages, Agents.Conversations lists and deletes
	// their conversations, Agents.Usage reads their usage, Agents.Secrets sets, lists and deletes the secrets their
	// plugins read (scope plugins:manage).
	Agents *AgentService
	// Users exports a user's messages (scope history:read) and erases the user's conversations and messages in
	// every agent of the account (scope history:delete).
	Users *UserService
	// Usage reads the account's sends, tokens, errors and latency by hour or day (scope usage:read); an agent's
	// are in Agents.Usage.
	Usage *UsageService
	// APIKeys manages the account's API keys (scope keys:manage).
	APIKeys *APIKeyService
	// Members manages the people of the account and their roles (scopes members:read, members:write).
	Members *MemberService
	// Budgets manages the account's spend budgets (scopes budgets:read, budgets:write).
	Budgets *BudgetService
	// AuditEvents lists and exports the account's audit log: who changed what, when and from where (scope
	// audit:read).
	AuditEvents *AuditEventService
	// WebhookEndpoints manages the endpoints that receive the account's events, their secrets and, in
	// WebhookEndpoints.Deliveries, their delivery logs (scope webhooks:manage).
	WebhookEndpoints *WebhookEndpointService
	// Plugins lists the plugin catalogue: the plugins an agent may name in its Plugins, their config schemas,
	// secrets and tools.
	Plugins *PluginService
	// Webhooks verifies webhook deliveries: VerifyWebhook and UnwrapWebhook, which need no client.
	Webhooks *WebhookService

	config config

	mu        sync.Mutex
	rateLimit *RateLimit
}

// RateLimit is the rate-limit state a response reported (X-RateLimit-*), for the limit with the least left.
type RateLimit struct {
	// Limit is how many requests that limit allows per window.
	Limit int
	// Remaining is how many are left in the current window.
	Remaining int
	// Reset is when the limit is full again.
	Reset time.Time
}

// config is a client's settings, resolved; per-call options change a copy.
type config struct {
	apiKey        string
	baseURL       string
	timeout       time.Duration
	maxRetries    int
	maxRetryDelay time.Duration
	httpClient    *http.Client
	headers       http.Header
	bodyFields    map[string]any
	// idempotencyKey is one call's own Idempotency-Key (WithIdempotencyKey); empty: a new one per write.
	idempotencyKey string
	// pollInterval and maxWait pace a wait for a background message; zero: DefaultPollInterval, DefaultMaxWait.
	pollInterval time.Duration
	maxWait      time.Duration
	// problems collects invalid option values, reported by NewClient or by the call they were given to.
	problems []string
}

// Option changes a setting. Options given to NewClient apply to every call of the client; options given to
// one call (every method takes them last) apply to that call only.
type Option func(*config)

// WithAPIKey sets the API key, sent as "Authorization: Bearer <key>". Default: $AGENTRY_API_KEY.
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey = strings.TrimSpace(key) }
}

// WithBaseURL sets the API's address, ending in /v1. Default: $AGENTRY_BASE_URL, else DefaultBaseURL.
func WithBaseURL(baseURL string) Option {
	return func(c *config) { c.baseURL = strings.TrimRight(strings.TrimSpace(baseURL), "/") }
}

// WithHTTPClient sets the *http.Client that sends requests (for a proxy, custom TLS or a test double). Its own
// Timeout should be zero: the client's timeout applies per attempt. Default: a client of its own.
func WithHTTPClient(httpClient *http.Client) Option {
	return func(c *config) {
		if httpClient == nil {
			c.problems = append(c.problems, "WithHTTPClient: the client is nil")
			return
		}
		c.httpClient = httpClient
	}
}

// WithMaxRetries sets how many times a failed attempt is retried (which failures are: see the package
// documentation). 0 disables retries. Default: DefaultMaxRetries (2).
func WithMaxRetries(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.problems = append(c.problems, fmt.Sprintf("WithMaxRetries: %d is negative", n))
			return
		}
		c.maxRetries = n
	}
}

// WithTimeout sets how long each attempt may take before it fails with a timeout [*ConnectionError]. For a
// stream: until it starts, then each silence between two chunks. Default: DefaultTimeout (30 s). A deadline
// on the call's context applies as well, to the whole call.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.problems = append(c.problems, fmt.Sprintf("WithTimeout: %v is not positive", d))
			return
		}
		c.timeout = d
	}
}

// WithMaxRetryDelay caps the wait before each retry. A longer Retry-After is cut to it; the error finally
// returned still carries the server's RetryAfter. Default: DefaultMaxRetryDelay (60 s).
func WithMaxRetryDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.problems = append(c.problems, fmt.Sprintf("WithMaxRetryDelay: %v is negative", d))
			return
		}
		c.maxRetryDelay = d
	}
}

// WithHeader sets an HTTP header on every request (as a client option) or on one call's requests.
func WithHeader(name, value string) Option {
	return func(c *config) {
		c.headers = c.headers.Clone()
		if c.headers == nil {
			c.headers = http.Header{}
		}
		c.headers.Set(name, value)
	}
}

// WithBodyField sets a top-level field of a call's JSON body, replacing what the parameters would send: for a
// field this version of the SDK does not know yet. It has no effect on calls without a body.
func WithBodyField(name string, value any) Option {
	return func(c *config) {
		fields := make(map[string]any, len(c.bodyFields)+1)
		maps.Copy(fields, c.bodyFields)
		fields[name] = value
		c.bodyFields = fields
	}
}

// WithIdempotencyKey sets the Idempotency-Key of one write (a create, update, delete or send), sent on each of
// its attempts instead of a new random one: for a call you may repeat yourself, after a crash or from a job
// queue. The service runs a request once per key, for 24 hours, and answers a repeat with the first answer; the
// same key with another request is a 422 IDEMPOTENCY_KEY_REUSED [*APIError] ([ErrBadRequest]). Reads ignore it.
// It is an option of a call only: NewClient refuses it, since every write of a client would share the key.
//
//	agent, err := client.Agents.Create(ctx, params, agentry.WithIdempotencyKey("import-"+jobID))
func WithIdempotencyKey(key string) Option {
	return func(c *config) {
		if key == "" {
			c.problems = append(c.problems, "WithIdempotencyKey: the key is empty")
			return
		}
		c.idempotencyKey = key
	}
}

// NewClient creates a client. Settings come from the options, then from the environment (AGENTRY_API_KEY,
// AGENTRY_BASE_URL), then from the defaults. It fails when there is no API key or an option is invalid.
func NewClient(opts ...Option) (*Client, error) {
	cfg := config{
		apiKey:        strings.TrimSpace(os.Getenv("AGENTRY_API_KEY")),
		baseURL:       strings.TrimRight(strings.TrimSpace(os.Getenv("AGENTRY_BASE_URL")), "/"),
		timeout:       DefaultTimeout,
		maxRetries:    DefaultMaxRetries,
		maxRetryDelay: DefaultMaxRetryDelay,
		httpClient:    &http.Client{},
	}
	if cfg.baseURL == "" {
		cfg.baseURL = DefaultBaseURL
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.idempotencyKey != "" {
		cfg.problems = append(cfg.problems,
			"WithIdempotencyKey is an option of one call: as a client option every write would share the key")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	c := &Client{config: cfg, Webhooks: &WebhookService{}}
	c.initServices()
	return c, nil
}

func (c *config) check() error {
	problems := c.problems
	if c.apiKey == "" {
		problems = append(problems,
			"no API key: pass agentry.WithAPIKey(key) or set the AGENTRY_API_KEY environment variable")
	}
	u, err := url.Parse(c.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems,
			fmt.Sprintf("the base URL must be an http(s) URL such as %s; got %q", DefaultBaseURL, c.baseURL))
	}
	if len(problems) > 0 {
		return errors.New("agentry: " + strings.Join(problems, "; "))
	}
	return nil
}

// LastRateLimit returns the rate-limit state of the most recent response that reported it, errors included,
// or nil before the first.
func (c *Client) LastRateLimit() *RateLimit {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rateLimit == nil {
		return nil
	}
	state := *c.rateLimit
	return &state
}

func (c *Client) recordRateLimit(h http.Header) {
	limit, ok1 := headerInt(h, "X-RateLimit-Limit")
	remaining, ok2 := headerInt(h, "X-RateLimit-Remaining")
	reset, ok3 := headerInt(h, "X-RateLimit-Reset")
	if !ok1 || !ok2 || !ok3 {
		return
	}
	c.mu.Lock()
	c.rateLimit = &RateLimit{Limit: limit, Remaining: remaining, Reset: time.Unix(int64(reset), 0)}
	c.mu.Unlock()
}

// callConfig is the client's settings with one call's options applied.
func (c *Client) callConfig(opts []Option) (config, error) {
	if len(opts) == 0 {
		return c.config, nil
	}
	cfg := c.config
	cfg.problems = nil
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg, cfg.check()
}

// entityTag is an ETag as the service answered it, or an agent's UpdatedAt, which is its version: W/"<UpdatedAt>".
func entityTag(value string) string {
	if value == "*" || strings.HasPrefix(value, `"`) || strings.HasPrefix(value, "W/") {
		return value
	}
	return `W/"` + value + `"`
}
