// Package wiring runs a deployed stack's event sources: what triggers
// what. A template says that a queue's messages go to a function, that
// a rule's events start a state machine, that an API's route invokes a
// function; deploy turns each such statement into a Wire, and the
// server's Host delivers its events as AWS would, for as long as the
// stack is deployed.
//
// A Wire's Kind names who runs it: each kind (sqs, sns, s3, rule,
// schedule, api, ...) registers a constructor (Register), and the Host
// makes one instance of each kind it meets, which then runs all the
// wires of that kind (a local event bus holds all the rules, a local
// API all the routes). A wire of a kind nobody registered is kept and
// listed with why it does not run.
//
// The kinds live in their own packages under wiring/ and reach the rest
// of the server only through Env: a local function's invoke, the Step
// Functions API in process, the AWS endpoint's configuration.
package wiring
