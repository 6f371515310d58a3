// Package awsarn builds, parses and checks the ARNs of Step Functions'
// resources (state machines and their versions and aliases, executions,
// express executions, map runs, activities) and the names they carry, for
// every layer: the service parses what callers send, the engine and the
// in-process driver build the ARNs of the executions they start. It
// imports only the standard library.
package awsarn
