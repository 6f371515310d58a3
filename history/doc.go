// Package history holds an execution's history as the API shows it:
// execution statuses, history event types and their details, the JSON of
// an event as GetExecutionHistory returns it, and what a run costs counted
// from its history (state transitions, billed duration, prices). It
// imports only the standard library.
package history
