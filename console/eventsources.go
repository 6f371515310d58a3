package console

import (
	"context"
	"net/http"
	"time"
)

// The event sources' page lists each deployed stack's wiring: what
// triggers what (a queue a function, a rule a state machine, an API's
// route a function), whether it runs, and when it last delivered.
//
//	GET /event-sources

// EventSource is one wire on the event sources' page.
type EventSource struct {
	Stack, ID, Kind string
	// Source says what the events come from, in the kind's terms (a
	// queue's ARN, a rule's pattern, a route).
	Source string
	// TargetType is function, statemachine, queue, topic or bus; Target
	// its ARN (a state machine's links to its page).
	TargetType, Target string
	// Running: its events are delivered; else Problem says why not.
	Running bool
	Problem string
	// Delivered counts the events delivered, the last at LastDelivery;
	// LastError is the last delivery's failure.
	Delivered    int64
	LastDelivery *time.Time
	LastError    string
}

func (c *Console) eventSources(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "eventsources", struct {
		page
		Sources []EventSource
	}{c.newPage(r, translate(language(r), "eventSources")), c.sources(r.Context())})
}

// sources is Options.EventSources, nil-safe.
func (c *Console) sources(ctx context.Context) []EventSource {
	if c.eventSourceList == nil {
		return nil
	}
	return c.eventSourceList(ctx)
}
