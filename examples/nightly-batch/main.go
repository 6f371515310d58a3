// Command nightly-batch runs a nightly batch on Stepwise: a job net of
// six jobs, each a child execution of the nightly-job state machine, whose
// work is done by activity workers. See README.md for the walkthrough.
//
//	go run ./examples/nightly-batch setup            create the activity and the state machines
//	go run ./examples/nightly-batch start [-date D]  start the night's run, execution night-D
//	go run ./examples/nightly-batch worker [flags]   work the jobs until interrupted
//	go run ./examples/nightly-batch wait [flags]     wait for the night, or a run of a job, to reach a status
//
// It talks to $AWS_ENDPOINT_URL, or to http://127.0.0.1:8083 when that is
// unset, with the usual AWS_* settings for the keys and the region.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// The definitions name their activity and child state machine with the
// ARNs of Stepwise's default region and account; setup rewrites them for
// the server it talks to.
var (
	//go:embed night.asl.json
	nightDefinition string
	//go:embed job.asl.json
	jobDefinition string
)

const (
	activityName = "nightly-batch"
	nightName    = "nightly-batch"
	jobName      = "nightly-job"
	defaultArns  = "arn:aws:states:us-east-1:123456789012:"
	roleArn      = "arn:aws:iam::123456789012:role/nightly-batch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "nightly-batch:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: nightly-batch setup | start [-date YYYY-MM-DD] | worker [-name N] [-inbox DIR] [-work D] [-pollers N] [-warn JOBS] | wait -date YYYY-MM-DD [-job JOB [-run N]] -status STATUS")
	}
	c, err := client(ctx)
	if err != nil {
		return err
	}
	flags := flag.NewFlagSet(args[0], flag.ContinueOnError)
	switch args[0] {
	case "setup":
		return setup(ctx, c)
	case "start":
		date := flags.String("date", time.Now().Format(time.DateOnly), "the business date the night works on")
		if err := flags.Parse(args[1:]); err != nil {
			return err
		}
		return start(ctx, c, *date)
	case "worker":
		w := &worker{c: c}
		flags.StringVar(&w.name, "name", "go-worker", "the worker name recorded in the ActivityStarted events")
		flags.StringVar(&w.inbox, "inbox", "inbox", "the directory where jobs find the files they need")
		flags.DurationVar(&w.work, "work", 2*time.Second, "how long each job works")
		pollers := flags.Int("pollers", 2, "how many jobs the worker runs at once")
		warn := flags.String("warn", "", "the jobs (comma-separated) that end with warning: they answer with the return code 4")
		if err := flags.Parse(args[1:]); err != nil {
			return err
		}
		w.warn = strings.Split(*warn, ",")
		return w.run(ctx, *pollers)
	case "wait":
		date := flags.String("date", time.Now().Format(time.DateOnly), "the night's business date")
		job := flags.String("job", "", "a job (JOB-001…): wait for its child execution instead of the night")
		redrive := flags.Int("run", 0, "with -job, the night's redrive count when the job ran (0 for the first run)")
		status := flags.String("status", "", "the status to wait for: RUNNING, SUCCEEDED, FAILED, ABORTED…")
		timeout := flags.Duration("timeout", 2*time.Minute, "how long to wait at most")
		if err := flags.Parse(args[1:]); err != nil {
			return err
		}
		if *status == "" {
			return errors.New("wait: -status is required")
		}
		return wait(ctx, c, *date, *job, *redrive, types.ExecutionStatus(*status), *timeout)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// client is a Step Functions client for $AWS_ENDPOINT_URL, by default a
// local Stepwise.
func client(ctx context.Context) (*sfn.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.BaseEndpoint == nil {
		cfg.BaseEndpoint = aws.String("http://127.0.0.1:8083")
	}
	return sfn.NewFromConfig(cfg), nil
}

// arnPrefix creates the activity (CreateActivity is idempotent) and returns
// the start of the server's ARNs, arn:aws:states:REGION:ACCOUNT:, which
// its ARN tells.
func arnPrefix(ctx context.Context, c *sfn.Client) (string, error) {
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String(activityName)})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(aws.ToString(act.ActivityArn), "activity:"+activityName), nil
}

// setup creates the activity and the two state machines, or updates the
// state machines when they exist.
func setup(ctx context.Context, c *sfn.Client) error {
	prefix, err := arnPrefix(ctx, c)
	if err != nil {
		return err
	}
	fmt.Println(prefix + "activity:" + activityName)
	for _, sm := range []struct{ name, definition string }{{jobName, jobDefinition}, {nightName, nightDefinition}} {
		definition := strings.ReplaceAll(sm.definition, defaultArns, prefix)
		arn := prefix + "stateMachine:" + sm.name
		_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
			Name: aws.String(sm.name), Definition: aws.String(definition), RoleArn: aws.String(roleArn)})
		var exists *types.StateMachineAlreadyExists
		if errors.As(err, &exists) {
			_, err = c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(definition)})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sm.name, err)
		}
		fmt.Println(arn)
	}
	return nil
}

// start starts the night of date.
func start(ctx context.Context, c *sfn.Client, date string) error {
	prefix, err := arnPrefix(ctx, c)
	if err != nil {
		return err
	}
	input, _ := json.Marshal(map[string]string{"date": date})
	out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(prefix + "stateMachine:" + nightName),
		Name:            aws.String("night-" + date),
		Input:           aws.String(string(input)),
	})
	if err != nil {
		return err
	}
	fmt.Println(aws.ToString(out.ExecutionArn))
	return nil
}

// wait waits until the night of date, or the run of job in its redrive
// count redrive (the child execution night-DATE-JOB-N), has status, and
// prints its name and status. It fails when the execution ends with
// another status, or after timeout.
func wait(ctx context.Context, c *sfn.Client, date, job string, redrive int, status types.ExecutionStatus, timeout time.Duration) error {
	prefix, err := arnPrefix(ctx, c)
	if err != nil {
		return err
	}
	name, sm := "night-"+date, nightName
	if job != "" {
		name, sm = fmt.Sprintf("night-%s-%s-%d", date, job, redrive), jobName
	}
	arn := prefix + "execution:" + sm + ":" + name
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		out, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		var missing *types.ExecutionDoesNotExist
		switch {
		case errors.As(err, &missing): // not started yet
		case err != nil:
			return fmt.Errorf("%s: waiting for %s: %w", name, status, err)
		case out.Status == status:
			fmt.Println(name, status)
			return nil
		case out.Status != types.ExecutionStatusRunning && out.Status != types.ExecutionStatusPendingRedrive:
			return fmt.Errorf("%s ended %s (%s), not %s", name, out.Status, aws.ToString(out.Error), status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: no %s within %s", name, status, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// worker works the jobs of the nightly-batch activity.
type worker struct {
	c     *sfn.Client
	name  string
	inbox string
	work  time.Duration
	warn  []string // the jobs that end with warning
}

// job is a job's input, as the night passes it to its child execution.
type job struct {
	Job   string `json:"job"`
	Date  string `json:"date"`
	Needs string `json:"needs,omitempty"`
}

// run polls with pollers goroutines until ctx ends.
func (w *worker) run(ctx context.Context, pollers int) error {
	prefix, err := arnPrefix(ctx, w.c)
	if err != nil {
		return err
	}
	activityArn := aws.String(prefix + "activity:" + activityName)
	w.logf("polling %s", *activityArn)
	var wg sync.WaitGroup
	errs := make(chan error, pollers)
	for range pollers {
		wg.Go(func() {
			for ctx.Err() == nil {
				task, err := w.c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: activityArn, WorkerName: aws.String(w.name)})
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				if task.TaskToken == nil { // the long poll ended with no task
					continue
				}
				if err := w.do(ctx, task); err != nil && ctx.Err() == nil {
					w.logf("%v", err)
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// do works one job: it fails with Job.InputMissing when the file the job
// needs is not in the inbox, and otherwise works, heartbeating every
// second, and succeeds with the return code 0, or 4 ("ended with
// warning") for a job of w.warn.
func (w *worker) do(ctx context.Context, task *sfn.GetActivityTaskOutput) error {
	var j job
	if err := json.Unmarshal([]byte(aws.ToString(task.Input)), &j); err != nil {
		return err
	}
	if j.Needs != "" {
		path := filepath.Join(w.inbox, j.Needs)
		if _, err := os.Stat(path); err != nil {
			w.logf("%s failed: %s is missing", j.Job, path)
			_, err := w.c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: task.TaskToken,
				Error: aws.String("Job.InputMissing"), Cause: aws.String(fmt.Sprintf("%s of %s: %s is missing", j.Job, j.Date, path))})
			return err
		}
	}
	w.logf("%s started", j.Job)
	beat := time.NewTicker(time.Second)
	defer beat.Stop()
	done := time.After(w.work)
	for working := true; working; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			working = false
		case <-beat.C:
			_, err := w.c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: task.TaskToken})
			var over *types.TaskTimedOut
			if errors.As(err, &over) { // the night stopped waiting for this job
				w.logf("%s cancelled", j.Job)
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	rc := 0
	if slices.Contains(w.warn, j.Job) {
		rc = 4
		w.logf("%s done, with warning (rc 4)", j.Job)
	} else {
		w.logf("%s done", j.Job)
	}
	output, _ := json.Marshal(map[string]any{"job": j.Job, "worker": w.name, "rc": rc})
	_, err := w.c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(string(output))})
	return err
}

func (w *worker) logf(format string, args ...any) {
	fmt.Printf("%s %s: %s\n", time.Now().Format(time.TimeOnly), w.name, fmt.Sprintf(format, args...))
}
