// Package failure holds what a workflow raises: the predefined ASL error
// names (States.TaskFailed, States.Runtime, ...) and the failure value, an
// error name and a cause, that Retry and Catch match and a failed
// execution reports. It imports only the standard library.
package failure
