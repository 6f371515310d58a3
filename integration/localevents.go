package integration

import (
	"context"
	"sync"
	"time"
)

// Event is one entry of a PutEvents request, as the local event bus
// takes it.
type Event struct {
	Source       string
	DetailType   string
	Detail       string
	EventBusName string
	Resources    []string
	// Time is the event's time; zero: now.
	Time time.Time
}

// EventResult is what became of one entry: its id, or why it failed.
type EventResult struct {
	EventID      string
	ErrorCode    string
	ErrorMessage string
}

// PutLocalEvents puts events on the server's local bus of the deployed
// rules. ids, when given, are the events' ids (those AWS's EventBridge
// gave them); otherwise the bus makes them. It answers one result per
// entry, as PutEvents does.
type PutLocalEvents func(ctx context.Context, entries []Event, ids []string) ([]EventResult, error)

// LocalEvents holds the server's local event bus, set once it exists
// (see Registry.SetLocalEvents); the events:putEvents Task delivers its
// entries there too.
type LocalEvents struct {
	mu  sync.RWMutex
	put PutLocalEvents
}

// Set sets the bus (nil: none).
func (l *LocalEvents) Set(put PutLocalEvents) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put = put
}

// Get returns the bus, nil when none is set.
func (l *LocalEvents) Get() PutLocalEvents {
	if l == nil {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.put
}

// SetLocalEvents sets the server's local event bus.
func (r *Registry) SetLocalEvents(put PutLocalEvents) { r.cfg.LocalEvents.Set(put) }
