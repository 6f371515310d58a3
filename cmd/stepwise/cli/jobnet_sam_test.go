package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/internal/testkit/slowtest"
)

// The job net as a SAM app, examples/jobnet-sam: its test cases, its
// template against its definition, and its Python handlers run for real.

const jobnetSAM = "../../../examples/jobnet-sam"

// TestJobnetSAMCases runs the example's test cases: the happy night, the
// scheduled start, a failed job failing the night, an error of another name and
// a retried throttle.
func TestJobnetSAMCases(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("test", "-v", jobnetSAM)
	require.Equal(t, 0, code, out+errOut)
	require.Empty(t, errOut)
	for _, name := range []string{
		"the happy night",
		"the schedule starts the night of its day",
		"a failed job fails the night",
		"an error of another name fails the night too",
		"a throttled function is retried",
	} {
		require.Regexp(t, "(?m)^--- PASS: "+regexp.QuoteMeta(jobnetSAM+"/jobnet.test.yaml/"+name)+` \(\d+\.\d\ds\)$`, out)
	}
	require.Regexp(t, `(?m)^5 passed, 0 failed\n\z`, out)
}

// TestJobnetSAMTemplate reads the template as a deploy does: it parses and
// prepares, its DefinitionSubstitutions fill every placeholder of the
// definition, its functions' handlers are functions of the module in
// CodeUri, and the schedule is a ScheduleV2 event.
func TestJobnetSAMTemplate(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(jobnetSAM, "template.yaml"))
	require.NoError(t, err)
	tpl, err := cfn.Parse(data)
	require.NoError(t, err)
	require.True(t, tpl.IsSAM())
	_, err = cfn.Prepare(tpl, map[string]string{"BrokenJobs": "reconcile"})
	require.NoError(t, err)

	sm := tpl.Resources["JobNet"]
	require.Equal(t, "AWS::Serverless::StateMachine", sm.Type)
	def, err := os.ReadFile(filepath.Join(jobnetSAM, sm.Properties["DefinitionUri"].(string)))
	require.NoError(t, err)
	require.True(t, json.Valid(def))
	var placeholders []string
	for _, m := range regexp.MustCompile(`\$\{([^}]*)\}`).FindAllStringSubmatch(string(def), -1) {
		if !slices.Contains(placeholders, m[1]) {
			placeholders = append(placeholders, m[1])
		}
	}
	slices.Sort(placeholders)
	subs := sm.Properties["DefinitionSubstitutions"].(map[string]any)
	var keys []string
	for k := range subs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Equal(t, keys, placeholders, "the definition's placeholders and the template's substitutions")
	require.Equal(t, map[string]any{"Fn::GetAtt": []any{"ReconcileFunction", "Arn"}}, subs["ReconcileFunctionArn"])

	module, err := os.ReadFile(filepath.Join(jobnetSAM, "functions", "jobs.py"))
	require.NoError(t, err)
	handlers := map[string]string{}
	for _, id := range tpl.ResourceIDs() {
		if r := tpl.Resources[id]; r.Type == "AWS::Serverless::Function" {
			h := r.Properties["Handler"].(string)
			handlers[id] = h
			fn, ok := strings.CutPrefix(h, "jobs.")
			require.True(t, ok, "%s: handler %s is not in jobs.py", id, h)
			require.Regexp(t, "(?m)^def "+fn+`\(event, context=None\):$`, string(module), id)
		}
	}
	require.Equal(t, map[string]string{"ExtractFunction": "jobs.extract", "LoadFunction": "jobs.load", "ReconcileFunction": "jobs.reconcile"}, handlers)

	event := sm.Properties["Events"].(map[string]any)["Nightly"].(map[string]any)
	require.Equal(t, "ScheduleV2", event["Type"])
	require.Equal(t, "cron(0 2 * * ? *)", event["Properties"].(map[string]any)["ScheduleExpression"])
}

// TestJobnetSAMHandlers imports the example's Python module and calls each
// handler as Lambda would, with an event and a context: each returns its
// job's result, and a job BROKEN_JOBS names raises JobFailed.
func TestJobnetSAMHandlers(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "the example's Python handlers run by python3")
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required on CI")
		}
		t.Skip("python3 is not on PATH")
	}
	const script = `
import json, sys, types
sys.path.insert(0, sys.argv[1])
import jobs
ctx = types.SimpleNamespace(function_name="jobnet-x", aws_request_id="r-1", get_remaining_time_in_millis=lambda: 60000)
out = {}
for name in ("extract", "load", "reconcile"):
    try:
        out[name] = getattr(jobs, name)({"job": name, "night": "2026-11-24"}, ctx)
    except Exception as e:
        out[name] = {"errorType": type(e).__name__, "errorMessage": str(e), "subclass": isinstance(e, jobs.JobFailed)}
print(json.dumps(out))
`
	run := func(broken string) map[string]any {
		cmd := exec.Command(python, "-c", script, filepath.Join(jobnetSAM, "functions"))
		cmd.Env = append(os.Environ(), "BROKEN_JOBS="+broken, "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.Output()
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		require.NoError(t, err, stderr)
		var res map[string]any
		require.NoError(t, json.Unmarshal(out, &res), string(out))
		return res
	}
	require.Equal(t, map[string]any{
		"extract":   map[string]any{"job": "extract", "night": "2026-11-24", "rows": 1200.0, "function": "jobnet-x"},
		"load":      map[string]any{"job": "load", "night": "2026-11-24", "rows": 1180.0, "function": "jobnet-x"},
		"reconcile": map[string]any{"job": "reconcile", "night": "2026-11-24", "rows": 20.0, "function": "jobnet-x"},
	}, run(""))
	res := run(" reconcile, unknown")
	require.Equal(t, map[string]any{
		"errorType":    "JobFailed",
		"errorMessage": "reconcile failed on night 2026-11-24: BROKEN_JOBS names it",
		"subclass":     true,
	}, res["reconcile"])
	require.Equal(t, 1200.0, res["extract"].(map[string]any)["rows"])
}
