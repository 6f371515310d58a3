// Package stepwisetype holds the types every layer of Stepwise shares:
// ASL error names, the failure value raised inside a workflow, execution
// statuses and history event types, and the JSON of a history event. It
// imports only the standard library.
package stepwisetype
