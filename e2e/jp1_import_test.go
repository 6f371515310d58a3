package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/convert/jp1"
)

// span is one run of a unit: its state's entry and exit in its net's
// history (exited zero if it did not end normally), and how many times
// the state was entered.
type span struct {
	entered, exited time.Time
	failed          bool // its task failed (a caught failure exits the state too)
	runs            int
	child           string // a nested net's execution
}

// netRun is what the histories of one net's execution (and its
// children's) say of its units, by their paths.
type netRun struct {
	start, stop time.Time
	units       map[string]*span
}

// readRun walks the history of the execution arn of the net at path,
// and of each nested net's child execution, into into.
func readRun(t *testing.T, c *sfn.Client, arn, path string, into map[string]*netRun) {
	t.Helper()
	nr := &netRun{units: map[string]*span{}}
	into[path] = nr
	pages := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	prev := map[int64]int64{}     // events by id: the event before
	entries := map[int64]string{} // TaskStateEntered events by id: the unit
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		require.NoError(t, err)
		for _, e := range page.Events {
			at := aws.ToTime(e.Timestamp)
			prev[e.Id] = e.PreviousEventId
			switch e.Type {
			case "ExecutionStarted":
				nr.start = at
			case "ExecutionSucceeded", "ExecutionFailed", "ExecutionAborted", "ExecutionTimedOut":
				nr.stop = at
			case "TaskStateEntered":
				name := aws.ToString(e.StateEnteredEventDetails.Name)
				unit := strings.SplitN(name, " (recovery of ", 2)[0]
				s := nr.units[path+"/"+unit]
				if s == nil {
					s = &span{}
					nr.units[path+"/"+unit] = s
				}
				s.runs++
				entries[e.Id] = path + "/" + unit
				s.entered = at
			case "TaskStateExited":
				name := aws.ToString(e.StateExitedEventDetails.Name)
				nr.units[path+"/"+strings.SplitN(name, " (recovery of ", 2)[0]].exited = at
			case "TaskFailed", "TaskTimedOut":
				id := e.Id
				for entries[id] == "" && id != 0 {
					id = prev[id]
				}
				require.NotZero(t, id, "no state entered before event %d", e.Id)
				nr.units[entries[id]].failed = true
			case "TaskSubmitted":
				var out struct{ ExecutionArn string }
				require.NoError(t, json.Unmarshal([]byte(aws.ToString(e.TaskSubmittedEventDetails.Output)), &out))
				// The nested net's state: the one its state machine is named after.
				child := out.ExecutionArn
				for unit, s := range nr.units {
					if s.child == "" && strings.Contains(child, ":"+jp1NetName(unit)+":") {
						s.child = child
					}
				}
			}
		}
	}
	for unit, s := range nr.units {
		if s.child != "" {
			readRun(t, c, s.child, unit, into)
		}
	}
}

var nonNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// jp1NetName is the state machine name the import gives the nested net
// unit (this test's units have plain names): its parents' names and its
// own joined with -.
func jp1NetName(unit string) string {
	parts := strings.Split(strings.TrimPrefix(unit, "/"), "/")[1:] // without the job group
	return nonNameChars.ReplaceAllString(strings.Join(parts, "-"), "_")
}

// relationsOf lists, by net path, each net's units and relations (from →
// to) as the unit definition file says.
func relationsOf(t *testing.T, file string) (units map[string][]*jp1.Unit, rels map[string][][2]string) {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	top, err := jp1.Parse(src)
	require.NoError(t, err)
	units, rels = map[string][]*jp1.Unit{}, map[string][][2]string{}
	var walk func(u *jp1.Unit, parent string)
	walk = func(u *jp1.Unit, parent string) {
		path := parent + "/" + strings.TrimPrefix(u.Name, "/")
		if u.Type() == "n" {
			units[path] = u.Units
			for _, ar := range u.All("ar") {
				m := regexp.MustCompile(`^\(f=([^,]+),t=([^,)]+)`).FindStringSubmatch(ar)
				require.NotNil(t, m, ar)
				rels[path] = append(rels[path], [2]string{m[1], m[2]})
			}
		}
		for _, ch := range u.Units {
			walk(ch, path)
		}
	}
	for _, u := range top {
		walk(u, "")
	}
	return units, rels
}

// TestJP1ImportExample imports examples/jp1-import/nightly.ajs, deploys
// what the import wrote with no change, and runs the nightly net as the
// README says: once to its end, then with FAIL_JOB=agg_sales, whose
// recovery job runs while the jobs beside it finish. The histories of
// the net and its nested nets show every job started after all its
// predecessors ended, and ran once.
func TestJP1ImportExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	example := filepath.Join("..", "examples", "jp1-import")
	file := filepath.Join(example, "nightly.ajs")
	app := t.TempDir()
	out, code := stepwiseCLI(t, "import", "jp1", file, "--out", app)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "5 state machines, 2 parameters not carried over")
	report, err := os.ReadFile(filepath.Join(app, "report.md"))
	require.NoError(t, err)
	require.Contains(t, string(report), "| /retail/daily | ejn | `monthend` | an exclusive schedule")

	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"), "--calendar", "retail="+filepath.Join(app, "calendars", "retail.txt"))
	out, code = stepwiseCLI(t, "deploy", filepath.Join(app, "template.yaml"), "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created   NetDaily (AWS::Serverless::StateMachine)")
	require.Contains(t, out, "created   ScheduleDaily1 (AWS::Scheduler::Schedule)")

	// The schedule at 01:30 Tokyo time, moved to the next business day
	// of the job group's calendar.
	sc := s.schedulerClient(t)
	sched, err := sc.GetSchedule(ctx, &scheduler.GetScheduleInput{GroupName: aws.String("nightly"), Name: aws.String("daily-1")})
	require.NoError(t, err)
	require.Equal(t, "cron(30 1 * * ? *)", aws.ToString(sched.ScheduleExpression))
	require.Equal(t, "Asia/Tokyo", aws.ToString(sched.ScheduleExpressionTimezone))
	tags, err := sc.ListTagsForResource(ctx, &scheduler.ListTagsForResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:123456789012:schedule-group/nightly")})
	require.NoError(t, err)
	require.Len(t, tags.Tags, 1)
	require.Equal(t, "stepwise:calendar/daily-1", aws.ToString(tags.Tags[0].Key))
	require.Equal(t, "retail:next", aws.ToString(tags.Tags[0].Value))

	units, rels := relationsOf(t, file)
	jobs := 0
	for _, us := range units {
		for _, u := range us {
			if u.Type() != "n" {
				jobs++
			}
		}
	}
	require.GreaterOrEqual(t, jobs, 30)

	c := s.client(t)
	run := func(name string, env map[string]string) (*sfn.DescribeExecutionOutput, map[string]*netRun, time.Duration) {
		input, err := json.Marshal(map[string]any{"env": env})
		require.NoError(t, err)
		began := time.Now()
		started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String(name), Input: aws.String(string(input)),
			StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:daily")})
		require.NoError(t, err)
		done := waitDone(t, c, aws.ToString(started.ExecutionArn))
		took := time.Since(began)
		runs := map[string]*netRun{}
		readRun(t, c, aws.ToString(started.ExecutionArn), "/retail/daily", runs)
		// Every unit that ran, ran once and after all its predecessors
		// had ended; a nested net's jobs ran within its state.
		for net, nr := range runs {
			for unit, s := range nr.units {
				require.Equal(t, 1, s.runs, "%s ran %d times", unit, s.runs)
			}
			for _, r := range rels[net] {
				to := nr.units[net+"/"+r[1]]
				if to == nil {
					continue
				}
				from := nr.units[net+"/"+r[0]]
				require.NotNil(t, from, "%s ran but not its predecessor %s", r[1], r[0])
				if strings.HasSuffix(r[1], "_fix") {
					require.True(t, from.failed, "recovery %s ran though %s ended normally", r[1], r[0])
				} else {
					require.False(t, from.failed, "%s ran though %s failed", r[1], r[0])
				}
				require.False(t, from.exited.IsZero(), "%s ran though %s did not end", r[1], r[0])
				require.False(t, to.entered.Before(from.exited), "%s started at %s, before %s ended at %s", r[1], to.entered, r[0], from.exited)
			}
			for unit, s := range nr.units {
				if child := runs[unit]; child != nil && s.child != "" {
					require.False(t, child.start.Before(s.entered), unit)
					require.False(t, !s.exited.IsZero() && s.exited.Before(child.stop), unit)
				}
			}
		}
		return done, runs, took
	}
	ranJobs := func(runs map[string]*netRun) (ran, ended []string) {
		for _, nr := range runs {
			for unit, s := range nr.units {
				if runs[unit] != nil {
					continue // a nested net
				}
				ran = append(ran, unit)
				if !s.exited.IsZero() && !s.failed {
					ended = append(ended, unit)
				}
			}
		}
		return ran, ended
	}

	// A night to its end: every job but the recovery job ran, once.
	outDir := t.TempDir()
	done, runs, took := run("night-1", map[string]string{"OUT_DIR": outDir})
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	require.Len(t, runs, 4) // daily, EXTRACT, ARCHIVE, LOAD
	ran, ended := ranJobs(runs)
	require.Len(t, ran, jobs-3) // not the recovery job, nor monthend's two
	require.Len(t, ended, jobs-3)
	published, err := os.ReadFile(filepath.Join(outDir, "published.txt"))
	require.NoError(t, err)
	require.Equal(t, "published\n", string(published))
	require.NoFileExists(t, filepath.Join(outDir, "recovered.txt"))
	t.Logf("%d jobs (%d ran) in %d nets: the night took %s", jobs, len(ran), len(runs), took)

	// A night whose agg_sales fails: its recovery job runs, agg_stock and
	// agg_customers beside it finish, the units after it never start.
	outDir = t.TempDir()
	done, runs, took = run("night-2", map[string]string{"OUT_DIR": outDir, "FAIL_JOB": "agg_sales"})
	require.Equal(t, "FAILED", string(done.Status))
	require.Equal(t, "JobFailed", aws.ToString(done.Error))
	require.Contains(t, aws.ToString(done.Cause), "/retail/daily/agg_sales ended abnormally")
	daily := runs["/retail/daily"].units
	require.True(t, daily["/retail/daily/agg_sales"].failed)
	for _, u := range []string{"agg_sales_fix", "agg_stock", "agg_customers"} {
		require.False(t, daily["/retail/daily/"+u].exited.IsZero(), u)
		require.False(t, daily["/retail/daily/"+u].failed, u)
	}
	ran, ended = ranJobs(runs)
	require.Len(t, ran, jobs-2-6) // not monthend's two, nor the six after agg_sales
	require.Len(t, ended, jobs-2-6-1)
	for _, u := range []string{"agg_margin", "report_sales", "report_stock", "report_mgmt", "publish", "end"} {
		require.Nil(t, daily["/retail/daily/"+u], u)
	}
	recovered, err := os.ReadFile(filepath.Join(outDir, "recovered.txt"))
	require.NoError(t, err)
	require.Equal(t, "agg_sales failed\n", string(recovered))
	require.NoFileExists(t, filepath.Join(outDir, "published.txt"))
	t.Logf("the night with agg_sales failing took %s", took)
}
