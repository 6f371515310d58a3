package maprun

import (
	"fmt"
	"strconv"
	"strings"

	"stepwise/awsarn"
)

// A map run's children are named alike by every host: child i is the
// UUID whose first parts derive from the map run's ARN and whose last
// twelve hex digits are i. A run picked up again finds its children by
// these names (Names.Index), and a start that races a stored one meets
// the same name.

// namePrefix is the first part of the names of the run's children.
func namePrefix(mapRunArn string) string {
	return awsarn.DerivedID([]byte(mapRunArn))[:24]
}

// Names are a run's children's names and ARNs.
type Names struct {
	mapRunArn, machine string
	where              awsarn.Prefix
	express            bool
	prefix             string
}

// NewNames returns the names of the children of the map run mapRunArn:
// region, account and machine are the parent's (machine its state
// machine's name, the last part of its ARN: a child's own
// "<machine>/<label>" for a run inside a child), label the Map's Label or
// name, express whether the children are EXPRESS executions.
func NewNames(mapRunArn, region, account, machine, label string, express bool) *Names {
	return &Names{mapRunArn: mapRunArn, where: awsarn.Prefix{Region: region, Account: account}, machine: machine + "/" + label,
		express: express, prefix: namePrefix(mapRunArn)}
}

// Name is the name of child i.
func (n *Names) Name(i int) string { return fmt.Sprintf("%s%012x", n.prefix, i) }

// Index is the index of the child of that name; false for a name that is
// not one of the run's.
func (n *Names) Index(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, n.prefix)
	if !ok || len(rest) != 12 {
		return 0, false
	}
	i, err := strconv.ParseInt(rest, 16, 64)
	return int(i), err == nil && i >= 0
}

// Machine is the name of the children's state machine, <machine>/<label>.
func (n *Names) Machine() string { return n.machine }

// Arn is the ARN of child i, as AWS forms it:
// …:execution:<machine>/<label>:<name>, or for EXPRESS children
// …:express:<machine>/<label>:<name>:<uuid>.
func (n *Names) Arn(i int) string {
	if n.express {
		return n.where.Express(n.machine, n.Name(i), awsarn.DerivedID(fmt.Appendf(nil, "%s\x00%d\x00express", n.mapRunArn, i)))
	}
	return n.where.Execution(n.machine, n.Name(i))
}
