package integration

import (
	"sort"
	"strings"

	"stepwise/asl"
	"stepwise/interp"
)

// Served says whether a Task resource has something to run it without a
// local function or an endpoint of its own: an activity or a nested
// execution (both the engine's), a Lambda function, or a resource a
// registered module serves with its pattern. Functions and services are
// called at AWS's endpoints unless one is configured.
func Served(resource string) bool {
	ok, _ := served(resource)
	return ok
}

// served is Served, with why not when its module says.
func served(resource string) (bool, string) {
	if interp.IsActivity(resource) || IsFunctionArn(resource) {
		return true, ""
	}
	resource, _ = Unqualified(resource)
	_, _, pattern, ok := ParseResource(resource)
	if !ok {
		return false, ""
	}
	base := strings.TrimSuffix(resource, string(pattern))
	if strings.HasPrefix(base, ResourcePrefix+"states:startExecution") {
		return true, ""
	}
	modulesMu.Lock()
	defer modulesMu.Unlock()
	m, found := modules[base]
	if !found {
		for res, pm := range modules {
			if strings.HasSuffix(res, "*") && strings.HasPrefix(base, strings.TrimSuffix(res, "*")) && len(res) > len(m.Resource) {
				m, found = pm, true
			}
		}
	}
	if !found {
		return false, ""
	}
	if m.Serves != nil {
		if ok, why := m.Serves(base); !ok {
			return false, why
		}
	}
	if pattern == RequestResponse {
		return true, ""
	}
	for _, p := range m.Patterns {
		if p == pattern {
			return true, ""
		}
	}
	return false, ""
}

// Unserved is a Task state whose resource nothing runs.
type Unserved struct {
	Location string // /States/Name/Resource
	Resource string
	Why      string // what its module says of it, "" when none serves it
}

// Consequence says what becomes of such a task: a .waitForTaskToken one
// makes no call and only waits for its token; any other fails.
func (u Unserved) Consequence() string {
	if strings.HasSuffix(u.Resource, string(WaitForTaskToken)) {
		return "no call is made and the task only waits for its token"
	}
	return "the task would fail with States.TaskFailed"
}

// UnservedTasks lists the Task states of a machine, and of the machines
// inside its Parallel and Map states, whose resource nothing runs (see
// Served), in the order of the definition.
func UnservedTasks(m *asl.StateMachine) []Unserved {
	var out []Unserved
	for _, t := range m.Tasks() {
		if ok, why := served(t.Resource); !ok {
			out = append(out, Unserved{Location: t.Location, Resource: t.Resource, Why: why})
		}
	}
	return out
}

var extraServices = map[string]bool{}

// RegisterServices makes service names known that a module calls besides
// the one its resource names (the AWS SDK integration calls every service
// it has a model of), for KnownService.
func RegisterServices(names ...string) {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	for _, n := range names {
		extraServices[n] = true
	}
}

// KnownService reports whether some integration calls the service of that
// name (the name --endpoint takes: sqs, lambda, dynamodb, ...). HTTP Tasks
// call the endpoints their parameters name, so http is none.
func KnownService(name string) bool {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if extraServices[name] {
		return true
	}
	for res := range modules {
		if service, _, _, ok := ParseResource(res); ok && service == name && name != "aws-sdk" && name != "http" {
			return true
		}
		if res == FunctionResource && name == "lambda" {
			return true
		}
	}
	return false
}

// KnownServices lists the service names KnownService knows, sorted.
func KnownServices() []string {
	modulesMu.Lock()
	set := map[string]bool{}
	for n := range extraServices {
		set[n] = true
	}
	for res := range modules {
		if service, _, _, ok := ParseResource(res); ok && service != "aws-sdk" && service != "http" && !strings.Contains(service, ":") {
			set[service] = true
		}
	}
	modulesMu.Unlock()
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
