package agentry

import (
	"encoding/json"
	"errors"
	"time"
)

// WebhookEventType is the type of an event delivered to a webhook endpoint.
type WebhookEventType string

// The event types the service delivers.
const (
	WebhookEventAgentCreated       WebhookEventType = "agent.created"
	WebhookEventAgentUpdated       WebhookEventType = "agent.updated"
	WebhookEventAgentStatusChanged WebhookEventType = "agent.status_changed"
	WebhookEventAgentDeleted       WebhookEventType = "agent.deleted"
	WebhookEventMessageCompleted   WebhookEventType = "message.completed"
	WebhookEventMessageFailed      WebhookEventType = "message.failed"
	WebhookEventTest               WebhookEventType = "webhook.test"
)

// WebhookEvent is an event delivered to a webhook endpoint, as UnwrapWebhook returns it:
// *AgentCreatedWebhookEvent, *AgentUpdatedWebhookEvent, *AgentStatusChangedWebhookEvent,
// *AgentDeletedWebhookEvent, *MessageCompletedWebhookEvent, *MessageFailedWebhookEvent, *WebhookTestEvent, or
// *UnknownWebhookEvent for a type newer than this SDK. Tell them apart with a type switch.
type WebhookEvent interface {
	// EventID returns the event's id (evt_...), also its webhook-id header: the same on every retry.
	EventID() string
	// EventType returns the event's type.
	EventType() WebhookEventType
	isWebhookEvent()
}

// AgentDeletedWebhookData is the data of agent.deleted.
type AgentDeletedWebhookData struct {
	// ID is the deleted agent's id.
	ID string `json:"id"`
}

// MessageFailedWebhookData is the data of message.failed: a send that ended with an error instead of a reply.
type MessageFailedWebhookData struct {
	AgentID   string `json:"agentId"`
	MessageID string `json:"messageId"`
	// Code is the error code of the failure, e.g. ErrorCodeModelError.
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

// AgentCreatedWebhookEvent is agent.created: an agent was created; Data is the agent.
type AgentCreatedWebhookEvent struct {
	// ID is the event's id, evt_ and a ULID.
	ID   string           `json:"id"`
	Type WebhookEventType `json:"type"`
	// CreatedAt is when the event happened.
	CreatedAt time.Time `json:"createdAt"`
	Data      Agent     `json:"data"`
}

// AgentUpdatedWebhookEvent is agent.updated: an agent was changed (every update); Data is the agent as it now
// is.
type AgentUpdatedWebhookEvent struct {
	ID        string           `json:"id"`
	Type      WebhookEventType `json:"type"`
	CreatedAt time.Time        `json:"createdAt"`
	Data      Agent            `json:"data"`
}

// AgentStatusChangedWebhookEvent is agent.status_changed: an agent's status changed, by an update or by the
// service; Data is the agent.
type AgentStatusChangedWebhookEvent struct {
	ID        string           `json:"id"`
	Type      WebhookEventType `json:"type"`
	CreatedAt time.Time        `json:"createdAt"`
	Data      Agent            `json:"data"`
}

// AgentDeletedWebhookEvent is agent.deleted: an agent was deleted; Data is its id.
type AgentDeletedWebhookEvent struct {
	ID        string                  `json:"id"`
	Type      WebhookEventType        `json:"type"`
	CreatedAt time.Time               `json:"createdAt"`
	Data      AgentDeletedWebhookData `json:"data"`
}

// MessageCompletedWebhookEvent is message.completed: a reply is complete; Data is the reply.
type MessageCompletedWebhookEvent struct {
	ID        string           `json:"id"`
	Type      WebhookEventType `json:"type"`
	CreatedAt time.Time        `json:"createdAt"`
	Data      Reply            `json:"data"`
}

// MessageFailedWebhookEvent is message.failed: a reply failed; Data says which and why.
type MessageFailedWebhookEvent struct {
	ID        string                   `json:"id"`
	Type      WebhookEventType         `json:"type"`
	CreatedAt time.Time                `json:"createdAt"`
	Data      MessageFailedWebhookData `json:"data"`
}

// WebhookTestEvent is webhook.test: sent when asked for, to check an endpoint; Data has no fixed shape.
type WebhookTestEvent struct {
	ID        string           `json:"id"`
	Type      WebhookEventType `json:"type"`
	CreatedAt time.Time        `json:"createdAt"`
	Data      map[string]any   `json:"data"`
}

// UnknownWebhookEvent is an event of a type newer than this SDK, its data as received.
type UnknownWebhookEvent struct {
	ID        string           `json:"id"`
	Type      WebhookEventType `json:"type"`
	CreatedAt time.Time        `json:"createdAt"`
	Data      json.RawMessage  `json:"data"`
}

// EventID returns the event's id.
func (e *AgentCreatedWebhookEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *AgentUpdatedWebhookEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *AgentStatusChangedWebhookEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *AgentDeletedWebhookEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *MessageCompletedWebhookEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *MessageFailedWebhookEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *WebhookTestEvent) EventID() string { return e.ID }

// EventID returns the event's id.
func (e *UnknownWebhookEvent) EventID() string { return e.ID }

// EventType returns WebhookEventAgentCreated.
func (*AgentCreatedWebhookEvent) EventType() WebhookEventType { return WebhookEventAgentCreated }

// EventType returns WebhookEventAgentUpdated.
func (*AgentUpdatedWebhookEvent) EventType() WebhookEventType { return WebhookEventAgentUpdated }

// EventType returns WebhookEventAgentStatusChanged.
func (*AgentStatusChangedWebhookEvent) EventType() WebhookEventType {
	return WebhookEventAgentStatusChanged
}

// EventType returns WebhookEventAgentDeleted.
func (*AgentDeletedWebhookEvent) EventType() WebhookEventType { return WebhookEventAgentDeleted }

// EventType returns WebhookEventMessageCompleted.
func (*MessageCompletedWebhookEvent) EventType() WebhookEventType {
	return WebhookEventMessageCompleted
}

// EventType returns WebhookEventMessageFailed.
func (*MessageFailedWebhookEvent) EventType() WebhookEventType { return WebhookEventMessageFailed }

// EventType returns WebhookEventTest.
func (*WebhookTestEvent) EventType() WebhookEventType { return WebhookEventTest }

// EventType returns the type the event came with.
func (e *UnknownWebhookEvent) EventType() WebhookEventType { return e.Type }

func (*AgentCreatedWebhookEvent) isWebhookEvent()       {}
func (*AgentUpdatedWebhookEvent) isWebhookEvent()       {}
func (*AgentStatusChangedWebhookEvent) isWebhookEvent() {}
func (*AgentDeletedWebhookEvent) isWebhookEvent()       {}
func (*MessageCompletedWebhookEvent) isWebhookEvent()   {}
func (*MessageFailedWebhookEvent) isWebhookEvent()      {}
func (*WebhookTestEvent) isWebhookEvent()               {}
func (*UnknownWebhookEvent) isWebhookEvent()            {}

// decodeWebhookEvent decodes a delivery's body into the event of its type.
func decodeWebhookEvent(payload []byte) (WebhookEvent, error) {
	var envelope struct {
		ID   *string           `json:"id"`
		Type *WebhookEventType `json:"type"`
	}
	if err := json.Unmarshal(payload, &envelope); err != nil {
		return nil, err
	}
	if envelope.ID == nil || envelope.Type == nil {
		return nil, errors.New("no id or type")
	}
	var event WebhookEvent
	switch *envelope.Type {
	case WebhookEventAgentCreated:
		event = &AgentCreatedWebhookEvent{}
	case WebhookEventAgentUpdated:
		event = &AgentUpdatedWebhookEvent{}
	case WebhookEventAgentStatusChanged:
		event = &AgentStatusChangedWebhookEvent{}
	case WebhookEventAgentDeleted:
		event = &AgentDeletedWebhookEvent{}
	case WebhookEventMessageCompleted:
		event = &MessageCompletedWebhookEvent{}
	case WebhookEventMessageFailed:
		event = &MessageFailedWebhookEvent{}
	case WebhookEventTest:
		event = &WebhookTestEvent{}
	default:
		event = &UnknownWebhookEvent{}
	}
	if err := json.Unmarshal(payload, event); err != nil {
		return nil, err
	}
	return event, nil
}
