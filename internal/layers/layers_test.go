package layers_test

import (
	"maps"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The module's path: packages are named below relative to it ("engine",
// "asl/jsonpath").
const module = "stepwise"

// A pattern is a package path relative to the module, or such a path
// followed by "/..." for that package and every package below it.

// rule says which module packages the packages matching pkg may import
// (their non-test imports). A package takes the rule of its exact path if
// there is one, else of the longest "/..." pattern that matches it.
type rule struct {
	pkg   string
	layer string   // where the package sits, for the failure message
	may   []string // patterns of the module packages it may import
}

// base is the bottom of every layer: JSON values and the API's types.
var base = []string{"jsonvalue", "failure", "history", "sfnapi", "awsarn"}

func with(patterns ...string) []string { return append(slices.Clone(base), patterns...) }

// rules is the layering (docs/design/README.md, its opening paragraph): awsjson →
// service → engine → interp → asl → the shared names and jsonvalue, with the store
// the engine's driver seam, integration the registry of task runners above
// the engine, the engine's observers beside the service, and cli assembling
// everything. A package imports only what its rule lists; a new import
// either fits the layering (add it to the rule) or goes into exceptions.
var rules = []rule{
	// The bottom: nothing of the module.
	{pkg: "failure", layer: "bottom: imports nothing else (docs/design/values-and-asl.md, Values)"},
	{pkg: "history", layer: "bottom: imports nothing else (docs/design/values-and-asl.md, Values)"},
	{pkg: "sfnapi", layer: "bottom: imports nothing else (docs/design/values-and-asl.md, Values)"},
	{pkg: "awsarn", layer: "bottom: imports nothing else (docs/design/values-and-asl.md, Values)"},
	{pkg: "jsonvalue", layer: "bottom: imports nothing else"},

	// asl: the language, its expression languages, bottom up.
	{pkg: "asl/budget", layer: "asl: evaluation budgets, the bottom of asl"},
	{pkg: "asl/jsonpath", layer: "asl: JSONPath", may: with("asl/budget")},
	{pkg: "asl/jsonata", layer: "asl: JSONata", may: with("asl/budget")},
	{pkg: "asl/intrinsic", layer: "asl: intrinsic functions", may: with("asl/budget", "asl/jsonpath")},
	{pkg: "asl/jsonatafn", layer: "asl: Step Functions' JSONata functions", may: with("asl/budget", "asl/intrinsic", "asl/jsonata")},
	{pkg: "asl/payload", layer: "asl: payload templates", may: with("asl/budget", "asl/intrinsic", "asl/jsonata", "asl/jsonpath")},
	{pkg: "asl", layer: "asl: the definition's model and validation", may: with("asl/budget", "asl/intrinsic", "asl/jsonata", "asl/jsonatafn", "asl/jsonpath", "asl/payload")},
	{pkg: "asl/dataflow", layer: "asl: the data-flow pipeline, above the model", may: with("asl/...")},

	// maprun: a distributed Map's map run, the rules both its hosts (the
	// engine, interp's Driver) share; it knows no definition.
	{pkg: "interp/maprun", layer: "interp: a map run's rules, below the interpreter and the engine's map-run runner", may: with()},

	// interp: runs a definition, knows nothing of storage or the API.
	{pkg: "interp", layer: "interp: below the engine, above asl and its map runs' rules", may: with("asl/...", "interp/maprun")},

	// store: the driver seam, below the engine; its drivers below it.
	{pkg: "store", layer: "store: the driver seam", may: with()},
	{pkg: "store/migrate", layer: "store: migrations"},
	{pkg: "store/internal/sqlcore", layer: "store: the drivers' logic and SQL written once", may: with("store", "store/internal/aliasrouting", "store/internal/eventpack", "store/internal/outboxrow")},
	{pkg: "store/internal/...", layer: "store: the drivers' shared parts", may: with("store")},
	{pkg: "store/...", layer: "store: a driver or the drivers' test suite", may: with("store", "store/internal/...", "store/migrate")},

	// config: the settings as plain structs, below what takes them.
	// deploy/cfn: templates read and resolved, knowing nothing of the engine.
	{pkg: "deploy/cfn", layer: "deploy/cfn: CloudFormation and SAM templates, beside config; the standard library and YAML only", may: with("internal/yamlsize", "internal/boundedfile")},

	// convert: other schedulers' definitions turned into apps, beside
	// deploy/cfn; they check what they write with asl.
	{pkg: "convert/...", layer: "convert: importers of other schedulers' definitions, writing apps that deploy; asl to check them", may: with("asl", "internal/boundedfile")},

	{pkg: "deploy", layer: "deploy: templates onto the service and the scheduler, in process", may: with("deploy/cfn", "service", "scheduler", "asl", "internal/boundedfile", "wiring", "wiring/bus")},

	// wiring: a deployed stack's event sources, delivered; its kinds
	// under it. They reach the server through wiring.Env only.
	{pkg: "wiring", layer: "wiring: event sources' wires and their host, beside the service (reaching it through wiring.Env)", may: with()},
	{pkg: "wiring/bus", layer: "wiring: the local event bus, its rules and PutEvents", may: with("wiring")},
	{pkg: "wiring/api", layer: "wiring: the APIs' routes, served on a local listener", may: with("wiring")},
	{pkg: "wiring/queue", layer: "wiring: queues, topics and buckets polled for local functions", may: with("wiring")},

	{pkg: "config", layer: "config: settings, below the packages that take them", may: with("asl/budget", "internal/security/egress", "internal/security/hostcheck", "internal/security/quota")},

	// internal: machinery below the engine, grouped by what it does: the
	// server's security (internal/security/...), the test helpers
	// (internal/testkit/...), the definitions' cache and retention. None
	// imports the engine or anything above it (that made the engine ↔
	// internal folder cycle).
	{pkg: "internal/security/...", layer: "internal/security: the server's gates and policies, below the engine", may: with("internal/security/...", "internal/boundedfile")},
	{pkg: "internal/testkit/...", layer: "internal/testkit: the tests' helpers", may: with("internal/testkit/...")},
	{pkg: "internal/defcache", layer: "internal: parsed definitions' cache, below the engine and the service", may: with("asl")},
	{pkg: "internal/startrule", layer: "internal: StartExecution's checks and messages, below the engine's runners and the service", may: with("asl", "store")},
	{pkg: "internal/retention", layer: "internal: retention over the store, below the engine", may: with("store")},
	{pkg: "internal/recent", layer: "internal: the names found lately, for the hot paths of the engine and the service"},
	{pkg: "internal/frontdoor", layer: "internal: what every request to an AWS API passes through (request ids, body limits, panics, error shapes, page tokens), below the wires and the operations"},
	{pkg: "internal/validation", layer: "internal: AWS's wording of a request's constraint violations, below every API"},
	{pkg: "internal/layers", layer: "internal: this test's package, no code"},
	{pkg: "internal/boundedfile", layer: "internal: files a user names, read bounded, below everything that reads them"},
	{pkg: "internal/yamlsize", layer: "internal: what a YAML document expands to, below everything that reads YAML"},
	{pkg: "internal/imagebuild", layer: "internal: the container image's builder, a build tool beside the program (scripts/build-image.sh)", may: with()},
	{pkg: "internal/cmd/imagebuild", layer: "internal: the container image builder's command (scripts/build-image.sh)", may: with("internal/imagebuild", "internal/boundedfile")},
	{pkg: "internal/warnrule", layer: "internal: warning thresholds on a Task's result, below the engine's starter, the observers and the service", may: with("asl/budget", "asl/jsonata", "asl/jsonpath")},

	// engine: below the service and the wire (docs/design/api.md, The API).
	{pkg: "engine", layer: "engine: below the service and integration, above interp and the store", may: with("interp", "asl/...", "store", "internal/defcache", "internal/recent", "interp/maprun", "engine/task", "engine/start", "engine/nested", "engine/activity", "engine/maprun", "engine/internal/node", "internal/warnrule")},
	{pkg: "engine/start", layer: "engine: the one way in (the Starter, its request, the children's host), below the engine, its runners and the service", may: with("asl", "interp", "store", "internal/defcache", "internal/recent", "internal/startrule", "internal/warnrule")},
	{pkg: "engine/activity", layer: "engine: the activities' runner, queue and task tokens, below the engine", may: with("engine/task", "interp")},
	{pkg: "engine/internal/node", layer: "engine: the protocol between a cluster's nodes, below the engine", may: with("store")},
	{pkg: "engine/task", layer: "engine: the task runners' seam, below the engine and its runners", may: with("interp")},
	{pkg: "engine/nested", layer: "engine: the states:startExecution runner, below the engine, its host", may: with("engine/task", "engine/start", "internal/startrule", "store")},
	{pkg: "engine/maprun", layer: "engine: the map-run runner and the item spool, below the engine, its host", may: with("engine/task", "engine/start", "interp/maprun", "interp", "asl", "store")},

	// integration: the task runners' registry, above the engine.
	{pkg: "integration", layer: "integration: the task runners' registry, above the engine", may: with("engine", "engine/task", "interp", "asl/...", "integration/itemreader")},
	{pkg: "integration/itemreader", layer: "integration: Map item readers, above interp", may: with("interp", "internal/boundedfile")},
	{pkg: "integration/mock", layer: "integration: the mocked task runner of the test runner, below the engine", may: with("engine/task", "interp", "internal/boundedfile")},
	{pkg: "integration/standard", layer: "integration: the built-in runners, assembled", may: with("integration/...", "config")},
	{pkg: "integration/integrationtest", layer: "integration: the runners' test helpers", may: with("integration", "engine", "engine/task", "interp", "internal/testkit/conformance", "internal/testkit/slowtest")},
	{pkg: "integration/awssdk/awsmodel", layer: "integration: the AWS API models and their parser, shared by the aws-sdk integration and TestState", may: with()},
	{pkg: "integration/awssdk/awsmodel/gen", layer: "integration: the generator of the embedded AWS API models", may: with("integration/awssdk/awsmodel")},
	{pkg: "integration/...", layer: "integration: a task runner, registered in integration", may: with("integration", "integration/sdkjob", "integration/awssdk", "integration/awssdk/awsmodel", "asl", "internal/security/egress", "internal/boundedfile", "internal/warnrule")},

	// The service and what sits beside it on the engine.
	{pkg: "service", layer: "service: the API's operations, above the engine", may: with("engine", "engine/task", "engine/start", "engine/activity", "interp", "asl/...", "store", "internal/defcache", "internal/validation", "internal/startrule", "internal/recent", "internal/frontdoor", "internal/warnrule")},
	{pkg: "service/servicetest", layer: "service: its test helpers", may: with("service", "engine", "engine/start", "engine/activity", "store")},
	{pkg: "observe/execlog", layer: "observer of the engine: execution logs, beside the service", may: with("engine", "store")},
	{pkg: "observe/metrics", layer: "observer of the engine: metrics, beside the service", may: with("engine", "store", "observe/notify", "internal/warnrule")},
	{pkg: "observe/notify", layer: "observer of the engine: status-change events, beside the service", may: with("engine", "store")},
	{pkg: "observe/tracing", layer: "observer of the engine: OpenTelemetry traces, beside the service", may: with("engine", "store", "interp", "internal/boundedfile")},
	{pkg: "scheduler", layer: "scheduler: EventBridge Scheduler's operations over the store, beside the service", may: with("scheduler/expr", "store", "internal/frontdoor", "internal/validation", "internal/boundedfile")},
	{pkg: "scheduler/restjson", layer: "scheduler: the Scheduler API's wire (REST-JSON), above its operations, as awsjson is above the service", may: with("scheduler", "internal/frontdoor", "internal/security/sigv4auth")},
	{pkg: "scheduler/expr", layer: "scheduler: schedule expressions"},
	{pkg: "workflowtest", layer: "workflowtest: `stepwise test`, workflows' test cases with their mocks, beside the service (linking neither the engine nor the store)", may: with("engine/task", "interp", "asl/...", "integration/mock", "internal/boundedfile", "internal/yamlsize")},

	// Above the service: the wire, the console, TestState.
	{pkg: "awsjson", layer: "awsjson: the wire, above the service", may: with("service", "internal/frontdoor", "internal/security/quota", "internal/security/sigv4auth")},
	{pkg: "console", layer: "console: the web console, above the service (an execution's recording as a test: workflowtest)", may: with("service", "asl", "workflowtest", "internal/boundedfile", "internal/security/crossorigin")},
	{pkg: "service/teststate", layer: "service/teststate: the TestState API, a hook of the service", may: with("service", "interp", "asl/...", "internal/startrule", "service/teststate/apishape")},
	{pkg: "service/teststate/apishape", layer: "service/teststate: the checks of results against the API's output shapes", may: with("integration/awssdk/awsmodel")},

	// The server package is the composition root: it assembles
	// everything; servertest starts it for tests.
	{pkg: "server", layer: "server: the composition root, assembles everything (but the test helpers)", may: with(
		"asl/...", "interp", "engine", "engine/task", "store/...", "config", "internal/...",
		"integration/...", "service", "observe/...", "scheduler", "scheduler/restjson",
		"workflowtest", "awsjson", "console", "service/teststate", "deploy/...", "wiring/...")},
	{pkg: "server/servertest", layer: "server: its test helpers, an in-process server for any package's tests", may: with("server", "config", "internal/testkit/...")},

	// The command's cli parses flags into the server's configuration and
	// runs the server, and the commands that need no server; its main
	// runs cli.
	{pkg: "cmd/stepwise/cli", layer: "cli: the commands, above the server", may: with(
		"server", "awsjson", "config", "asl/...", "interp", "engine/task", "workflowtest", "deploy/...", "convert/...",
		"integration/...", "observe/tracing", "store/sqlitestore",
		"internal/boundedfile", "internal/security/quota", "internal/security/sigv4auth")},
	{pkg: "cmd/stepwise", layer: "cmd: the binary's main", may: []string{"cmd/stepwise/cli"}},

	// Tests of the whole: their code is in test files.
	{pkg: "e2e", layer: "end-to-end tests: test files only"},
	{pkg: "examples/...", layer: "examples: test files only"},
	{pkg: "docs", layer: "the documents' tests: test files only"},
}

// testHelpers are the packages that only tests use: no package outside
// them imports one, whatever its rule says ("internal/..." in cli's rule
// does not let the server import a test's DNS server).
var testHelpers = []string{
	"internal/testkit/...",
	"service/servicetest", "store/storetest", "integration/integrationtest",
	"server/servertest",
}

// exceptions are today's imports that go against the layering: each one
// is allowed by name until it is fixed, and the test fails once it no
// longer happens, so that it is taken off the list.
var exceptions = []struct{ from, to, why string }{
	// None today.
}

// The module's packages and their non-test imports of module packages,
// relative to the module, read once with go list.
var graph = sync.OnceValues(func() (map[string][]string, error) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, &listError{err, string(ee.Stderr)}
		}
		return nil, err
	}
	g := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := rel(fields[0])
		if !ok {
			continue
		}
		g[pkg] = []string{}
		for _, imp := range fields[1:] {
			if r, ok := rel(imp); ok {
				g[pkg] = append(g[pkg], r)
			}
		}
	}
	return g, nil
})

type listError struct {
	err    error
	stderr string
}

func (e *listError) Error() string { return "go list: " + e.err.Error() + "\n" + e.stderr }

func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

func load(t *testing.T) map[string][]string {
	t.Helper()
	g, err := graph()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) == 0 {
		t.Fatal("go list found no packages of the module")
	}
	return g
}

func matches(pattern, pkg string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
	}
	return pkg == pattern
}

// isTestHelper reports whether pkg is one of testHelpers.
func isTestHelper(pkg string) bool {
	return slices.ContainsFunc(testHelpers, func(h string) bool { return matches(h, pkg) })
}

// ruleFor returns the rule of pkg: its exact one, else the longest
// matching "/..." pattern.
func ruleFor(pkg string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range rules {
		if r.pkg == pkg {
			return r, true
		}
		if strings.HasSuffix(r.pkg, "/...") && matches(r.pkg, pkg) && (!found || len(r.pkg) > len(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

func sortedKeys(g map[string][]string) []string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Every package's imports of the module follow its rule or are a named
// exception.
func TestLayerImports(t *testing.T) {
	t.Parallel()
	g := load(t)
	used := make([]bool, len(exceptions))
	ruleUsed := map[string]bool{}
	for _, pkg := range sortedKeys(g) {
		r, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %s/%s has no rule: add one to the table in internal/layers/layers_test.go saying which module packages it may import", module, pkg)
			continue
		}
		ruleUsed[r.pkg] = true
		for _, imp := range g[pkg] {
			if isTestHelper(imp) && !isTestHelper(pkg) {
				t.Errorf("%s/%s imports %s/%s, a test helper: only tests and other test helpers may import it (testHelpers in internal/layers/layers_test.go)",
					module, pkg, module, imp)
				continue
			}
			if slices.ContainsFunc(r.may, func(p string) bool { return matches(p, imp) }) {
				continue
			}
			if i := slices.IndexFunc(exceptions, func(e struct{ from, to, why string }) bool { return e.from == pkg && e.to == imp }); i >= 0 {
				used[i] = true
				continue
			}
			may := "nothing of the module"
			if len(r.may) > 0 {
				may = strings.Join(r.may, ", ")
			}
			t.Errorf("%s/%s imports %s/%s, which its rule does not allow:\n\trule %q (%s) may import: %s\n\tif the import fits the layering of docs/design/README.md, add it to the rule; if it goes against it, list it in exceptions with why",
				module, pkg, module, imp, r.pkg, r.layer, may)
		}
	}
	for i, e := range exceptions {
		if used[i] {
			t.Logf("exception %s → %s: %s", e.from, e.to, e.why)
		}
		if !used[i] {
			t.Errorf("exception %s → %s no longer happens (or its rule now allows it): take it off the exceptions", e.from, e.to)
		}
	}
	for _, h := range testHelpers {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(g)), func(p string) bool { return matches(h, p) }) {
			t.Errorf("test helper %s is no package of the module: take it off testHelpers", h)
		}
	}
	for _, r := range rules {
		if !ruleUsed[r.pkg] {
			t.Errorf("rule %q matches no package of the module: take it off the table", r.pkg)
		}
	}
}

func top(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	return first
}

// No two top-level folders import each other, directly or through others.
func TestLayerFoldersHaveNoCycles(t *testing.T) {
	t.Parallel()
	g := load(t)
	// edges[a][b] is one import that makes folder a import folder b.
	edges := map[string]map[string]string{}
	for _, pkg := range sortedKeys(g) {
		a := top(pkg)
		for _, imp := range g[pkg] {
			if b := top(imp); a != b {
				if edges[a] == nil {
					edges[a] = map[string]string{}
				}
				if _, ok := edges[a][b]; !ok {
					edges[a][b] = pkg + " → " + imp
				}
			}
		}
	}
	reach := func(from string) map[string]bool {
		seen := map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for w := range edges[v] {
				if !seen[w] {
					seen[w] = true
					stack = append(stack, w)
				}
			}
		}
		return seen
	}
	folders := make([]string, 0, len(edges))
	for f := range edges {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	grouped := map[string]bool{}
	for _, a := range folders {
		if grouped[a] {
			continue
		}
		ra := reach(a)
		group := []string{a}
		for _, b := range folders {
			if b != a && ra[b] && reach(b)[a] {
				group = append(group, b)
			}
		}
		if len(group) == 1 {
			continue
		}
		var why []string
		for _, x := range group {
			grouped[x] = true
			for _, y := range group {
				if imp, ok := edges[x][y]; ok {
					why = append(why, imp)
				}
			}
		}
		t.Errorf("top-level folders %s import one another; their imports between them (one each way of a pair):\n\t%s",
			strings.Join(group, ", "), strings.Join(why, "\n\t"))
	}
}

// The engine sits below the service and the wire: it declares the types
// it exchanges, and the service adapts to them (docs/design/README.md, its
// opening paragraph, and docs/design/api.md). Not even indirectly does it depend on them.
func TestLayerEngineDependsOnNothingAbove(t *testing.T) {
	t.Parallel()
	g := load(t)
	above := []string{"service/...", "awsjson/...", "cmd/...", "server/...", "integration/...", "service/teststate/..."}
	seen := map[string]string{"engine": ""} // package → the package that imported it
	queue := []string{"engine"}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		for _, imp := range g[pkg] {
			if _, ok := seen[imp]; !ok {
				seen[imp] = pkg
				queue = append(queue, imp)
			}
		}
	}
	pkgs := make([]string, 0, len(seen))
	for pkg := range seen {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		if !slices.ContainsFunc(above, func(p string) bool { return matches(p, pkg) }) {
			continue
		}
		path := []string{pkg}
		for p := seen[pkg]; p != ""; p = seen[p] {
			path = append(path, p)
		}
		slices.Reverse(path)
		t.Errorf("engine depends on %s: %s", pkg, strings.Join(path, " → "))
	}
}
