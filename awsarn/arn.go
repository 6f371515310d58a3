package awsarn

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// ARNs of Step Functions resources:
//
//	arn:<partition>:states:<region>:<account>:stateMachine:<name>[:<version or alias>]
//	arn:<partition>:states:<region>:<account>:execution:<stateMachineName>:<name>
//	arn:<partition>:states:<region>:<account>:express:<stateMachineName>:<name>:<id>
//	arn:<partition>:states:<region>:<account>:activity:<name>
//	arn:<partition>:states:<region>:<account>:mapRun:<stateMachineName>/<label>:<id>
//	arn:<partition>:states:<region>:<account>:execution:<stateMachineName>/<label>:<name>   (a map run's child)
//
// A map run's label is the Map state's Label, or its name when it has none.

// Resource types, as they appear in ARNs.
const (
	StateMachine = "stateMachine"
	Execution    = "execution"
	Express      = "express"
	Activity     = "activity"
	MapRun       = "mapRun"
)

// ErrPrefix is the error of a text that does not start with "arn:";
// ErrInvalid of one that does but is no Step Functions ARN. Their
// callers word them as their API does (the service: InvalidArn).
var (
	ErrPrefix  = errors.New("not an ARN: no arn: prefix")
	ErrInvalid = errors.New("not a Step Functions ARN")
)

// Prefix is where a resource lives: its ARN up to its resource type.
type Prefix struct {
	Partition, Region, Account string
}

// String returns "arn:<partition>:states:<region>:<account>:"; an empty
// partition is "aws".
func (p Prefix) String() string {
	part := p.Partition
	if part == "" {
		part = "aws"
	}
	return "arn:" + part + ":states:" + p.Region + ":" + p.Account + ":"
}

// StateMachine returns the ARN of the state machine called name.
func (p Prefix) StateMachine(name string) string { return p.String() + StateMachine + ":" + name }

// Execution returns the ARN of a STANDARD execution.
func (p Prefix) Execution(stateMachineName, name string) string {
	return p.String() + Execution + ":" + stateMachineName + ":" + name
}

// Express returns the ARN of an EXPRESS execution.
func (p Prefix) Express(stateMachineName, name, id string) string {
	return p.String() + Express + ":" + stateMachineName + ":" + name + ":" + id
}

// Activity returns the ARN of the activity called name.
func (p Prefix) Activity(name string) string { return p.String() + Activity + ":" + name }

// MapRun returns the ARN of the map run id of a Map state labelled label
// in an execution of the state machine called stateMachineName.
func (p Prefix) MapRun(stateMachineName, label, id string) string {
	return p.String() + MapRun + ":" + stateMachineName + "/" + label + ":" + id
}

// MapRunChild returns the ARN of a map run's child execution called name.
func (p Prefix) MapRunChild(stateMachineName, label, name string) string {
	return p.Execution(stateMachineName+"/"+label, name)
}

// ARN is a parsed Step Functions ARN.
type ARN struct {
	Text     string
	Prefix   Prefix
	Resource string   // StateMachine, Execution, Express, Activity, MapRun, ...
	Parts    []string // what follows the resource type, split at ':'
}

// Parse parses a Step Functions ARN: "arn:", a partition, "states", a
// region, an account, a resource type and at least one more part, none of
// them empty. It returns ErrPrefix or ErrInvalid for any other text.
func Parse(s string) (*ARN, error) {
	if !strings.HasPrefix(s, "arn:") {
		return nil, ErrPrefix
	}
	f := strings.Split(s, ":")
	if len(f) < 7 || f[1] == "" || f[2] != "states" || f[3] == "" || f[4] == "" || f[5] == "" {
		return nil, ErrInvalid
	}
	for _, p := range f[6:] {
		if p == "" {
			return nil, ErrInvalid
		}
	}
	return &ARN{Text: s, Prefix: Prefix{Partition: f[1], Region: f[3], Account: f[4]}, Resource: f[5], Parts: f[6:]}, nil
}

// StateMachineName returns the name of the state machine an ARN names:
// a state machine's (qualified or not), or the one an execution, express
// execution or map run belongs to (for a map run or its child, with the
// Map's label: "machine/label"). A text that is no ARN is returned as it
// is.
func StateMachineName(arn string) string {
	f := strings.SplitN(arn, ":", 8)
	if len(f) >= 7 {
		return f[6]
	}
	return arn
}

// Unqualified returns a state machine ARN without its version or alias.
func Unqualified(stateMachineArn string) string {
	f := strings.Split(stateMachineArn, ":")
	if len(f) > 7 {
		return strings.Join(f[:7], ":")
	}
	return stateMachineArn
}

// DerivedID returns an id in a UUID's form (8-4-4-4-12 hexadecimal digits)
// derived from key: the same key, the same id. The engine names what an
// execution starts by it (a map run, a child execution, an EXPRESS
// child's id), so that a step replayed or a task dispatched again after a
// restart names the same resource instead of starting another.
func DerivedID(key []byte) string {
	sum := sha256.Sum256(key)
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
