package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/spf13/cobra"

	"stepwise/config"
	"stepwise/internal/security/sigv4auth"
)

type benchCommand struct {
	*CommandBase
	runs          []int
	concurrency   int
	syncCalls     int
	stored        int
	rest          time.Duration
	keep          bool
	serverArgs    []string
	trace         bool // serve --trace-all into a discarding OTLP endpoint
	warmup        int
	activityRuns  int
	activitySteps int
	pollers       int
	inflight      int
	cpuProfile    string
	serverCommand string
	db            string
	nodes         int
	jsonOut       bool
	serverBinary  string
	sdkClient     bool // the hot calls with the AWS SDK for Go, not the lean client

	figures benchFigures // the report's figures, for --json

	pids []int // the servers'
}

// benchClients are SDK clients, one per server; load is spread over them.
type benchClients []*sfn.Client

// at is the client of the i-th worker.
func (cs benchClients) at(i int) *sfn.Client { return cs[i%len(cs)] }

// serversCPU is the CPU seconds the servers used so far.
func (c *benchCommand) serversCPU() float64 {
	total := 0.0
	for _, pid := range c.pids {
		total += procCPU(pid)
	}
	return total
}

// serversMemory is the servers' resident and peak resident memory, summed.
func (c *benchCommand) serversMemory() (rss, hwm int64) {
	for _, pid := range c.pids {
		m := procMemory(pid)
		rss, hwm = rss+m.rss, hwm+m.hwm
	}
	return rss, hwm
}

func (c *benchCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the server: durable executions, sync executions, memory and disk",
		Long: `Start "stepwise serve" on a fresh database in a temporary directory and drive
it over HTTP (the timed calls with a lean client of the AWS JSON wire,
signed with SigV4; with the AWS SDK for Go under --sdk-client; the other
calls with the SDK), then report:

  - Standard executions/s and state transitions/s of a 10-state Pass/Choice
    machine, and the p50/p99 time from StartExecution to the finished
    execution, for each --runs count;
  - StartSyncExecution calls/s of the same machine as EXPRESS;
  - the server's peak resident memory, and its resident memory once
    --stored finished executions are stored;
  - the database size per stored execution;
  - the server's resident memory once the load has rested --rest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.IntSliceVar(&c.runs, "runs", []int{1000, 10000}, "numbers of Standard executions to time")
	f.IntVar(&c.concurrency, "concurrency", 32, "concurrent clients")
	f.IntVar(&c.syncCalls, "sync-calls", 10000, "StartSyncExecution calls to time")
	f.IntVar(&c.warmup, "warmup", 500, "executions run before the timed runs and not counted (connections, caches, heap)")
	f.IntVar(&c.activityRuns, "activity-runs", 0, "executions of a machine of sequential activity tasks to time (0: skip)")
	f.IntVar(&c.activitySteps, "activity-steps", 5, "activity tasks per execution")
	f.IntVar(&c.pollers, "pollers", 32, "concurrent activity workers")
	f.IntVar(&c.inflight, "activity-inflight", 64, "activity executions running at once (0: start them all at once)")
	f.DurationVar(&c.rest, "rest", 5*time.Second, "how long the load rests before the server's memory is read again (0: skip)")
	f.IntVar(&c.stored, "stored", 0, "finished executions to store before measuring resident memory (0: skip)")
	f.BoolVar(&c.keep, "keep", false, "keep the temporary database")
	f.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the load generator to this file")
	f.MarkHidden("cpuprofile")
	f.StringVar(&c.serverCommand, "server-command", "", `run this program instead of "stepwise serve" (it must print "on http://ADDR " first)`)
	f.MarkHidden("server-command")
	f.StringSliceVar(&c.serverArgs, "server-arg", nil, "extra argument for the server (repeatable)")
	f.BoolVar(&c.trace, "trace", false, "trace every execution (serve --trace-all), exported over OTLP/HTTP to an endpoint of the bench that drops the spans: compare with a run without it for the cost of tracing")
	f.StringVar(&c.db, "db", "", "database of the servers: a postgres:// URL to share, or a SQLite file (default: a new file in a temporary directory)")
	f.IntVar(&c.nodes, "nodes", 1, "servers to start on the database, the load spread over them (more than one needs a postgres:// --db)")
	f.BoolVar(&c.jsonOut, "json", false, "print the report's figures as one JSON object on stdout (the report itself goes to stderr)")
	f.BoolVar(&c.sdkClient, "sdk-client", false, "make the timed calls (StartExecution, DescribeExecution, StartSyncExecution, and the activity workers' GetActivityTask and SendTaskSuccess) with the AWS SDK for Go's client, not the bench's lean one (the load generator then spends more CPU than the server)")
	f.StringVar(&c.serverBinary, "server-binary", "", `run "PROGRAM serve" as the server instead of this program's (another build's, to compare it under the same load generator)`)
	cmd.AddCommand((&benchCompareCommand{CommandBase: c.CommandBase}).command())
	return cmd
}

// benchDefinition has 10 states: 5 Pass and 5 Choice.
const benchDefinition = `{"StartAt": "P1", "States": {
  "P1": {"Type": "Pass", "Parameters": {"order.$": "$.order", "step": 1}, "Next": "C1"},
  "C1": {"Type": "Choice", "Choices": [{"Variable": "$.step", "NumericEquals": 1, "Next": "P2"}], "Default": "P2"},
  "P2": {"Type": "Pass", "Parameters": {"order.$": "$.order", "step": 2}, "Next": "C2"},
  "C2": {"Type": "Choice", "Choices": [{"Variable": "$.step", "NumericEquals": 2, "Next": "P3"}], "Default": "P3"},
  "P3": {"Type": "Pass", "Parameters": {"order.$": "$.order", "step": 3}, "Next": "C3"},
  "C3": {"Type": "Choice", "Choices": [{"Variable": "$.step", "NumericEquals": 3, "Next": "P4"}], "Default": "P4"},
  "P4": {"Type": "Pass", "Parameters": {"order.$": "$.order", "step": 4}, "Next": "C4"},
  "C4": {"Type": "Choice", "Choices": [{"Variable": "$.step", "NumericEquals": 4, "Next": "P5"}], "Default": "P5"},
  "P5": {"Type": "Pass", "Parameters": {"order.$": "$.order", "step": 5}, "Next": "C5"},
  "C5": {"Type": "Choice", "Choices": [{"Variable": "$.step", "NumericGreaterThan": 4, "Next": "Done"}], "Default": "Done"},
  "Done": {"Type": "Succeed"}}}`

const benchInput = `{"order": {"id": "o-12345", "customer": "Ada Lovelace", "items": [{"sku": "A1", "qty": 2}, {"sku": "B7", "qty": 1}], "note": "leave at the door"}}`

var benchListenRE = regexp.MustCompile(`on http://(\S+) `)

func (c *benchCommand) run(ctx context.Context) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if c.concurrency < 1 {
		return &UsageError{"--concurrency must be at least 1"}
	}
	if c.nodes < 1 {
		return &UsageError{"--nodes must be at least 1"}
	}
	shared := config.IsPostgresURL(c.db)
	if c.nodes > 1 && !shared {
		return &UsageError{"--nodes above 1 needs a postgres:// --db that the servers share"}
	}
	if c.jsonOut {
		out := c.Out
		c.Out = c.Err
		defer func() { c.Out = out }()
		defer func() {
			if err == nil {
				err = c.figures.write(out)
			}
		}()
	}
	tuneGC() // the load generator allocates as much as the server
	stopProfile, err := startCPUProfile(c.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	dir, err := os.MkdirTemp("", "stepwise-bench")
	if err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(dir)
	}
	db := c.db
	if db == "" {
		db = filepath.Join(dir, "bench.db")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if c.serverBinary != "" {
		self = c.serverBinary
	}
	if c.trace {
		sink, err := startTraceSink()
		if err != nil {
			return err
		}
		defer sink.close()
		defer sink.report(c.Out)
		c.serverArgs = append(sink.args(), c.serverArgs...)
	}
	keyID, secret, err := benchKey(c.serverArgs)
	if err != nil {
		return err
	}
	var clients benchClients
	var callers []benchCaller
	var addrs []string
	for range c.nodes {
		addr, pid, stop, err := c.startServer(self, db)
		if err != nil {
			return err
		}
		defer stop()
		client, err := benchClient(ctx, "http://"+addr, c.concurrency+c.pollers, keyID, secret)
		if err != nil {
			return err
		}
		clients, addrs, c.pids = append(clients, client), append(addrs, addr), append(c.pids, pid)
		if c.sdkClient {
			callers = append(callers, sdkCaller{client})
		} else {
			callers = append(callers, newLeanCaller("http://"+addr, c.concurrency+c.pollers, keyID, secret))
		}
	}
	client := clients[0]
	where := db
	if shared {
		where = "the shared database"
	}
	fmt.Fprintf(c.Out, "stepwise bench: server pids %v on %s, %d concurrent clients, data in %s\n",
		c.pids, strings.Join(addrs, " "), c.concurrency, where)
	var probe *dbProbe
	if shared {
		probe = openDBProbe(ctx, db)
		defer probe.close()
	}
	c.printScaleSetup(probe)
	c.checkConnections(ctx, probe)

	for _, typ := range []types.StateMachineType{types.StateMachineTypeStandard, types.StateMachineTypeExpress} {
		if _, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
			Name: aws.String("bench-" + strings.ToLower(string(typ))), Definition: aws.String(benchDefinition),
			RoleArn: aws.String(DefaultRoleArn), Type: typ,
		}); err != nil {
			return fmt.Errorf("create state machine: %w", err)
		}
	}
	standard := "arn:aws:states:us-east-1:123456789012:stateMachine:bench-standard"
	express := "arn:aws:states:us-east-1:123456789012:stateMachine:bench-express"

	total := 0
	if c.warmup > 0 {
		if _, _, err := c.standard(ctx, callers, standard, "warmup-", c.warmup); err != nil {
			return err
		}
		total += c.warmup
	}
	if err := probe.analyze(ctx); err != nil {
		fmt.Fprintf(c.Out, "scale: the database's statistics could not be brought up to date (ANALYZE: %v)\n", err)
	}
	for round, n := range c.runs {
		db0 := probe.sample(ctx)
		db0.cpu = probe.cpu()
		cpu0, client0, busy0 := c.serversCPU(), selfCPU(), machineBusy()
		lat, elapsed, err := c.standard(ctx, callers, standard, fmt.Sprintf("r%d-", round), n)
		if err != nil {
			return err
		}
		cpu, client, busy1 := c.serversCPU()-cpu0, (selfCPU() - client0).Seconds(), machineBusy()
		total += n
		fmt.Fprintf(c.Out, "standard %6d executions: %8.0f executions/s %9.0f transitions/s  start→finish p50 %6.2f ms p99 %6.2f ms\n",
			n, float64(n)/elapsed.Seconds(), float64(n*10)/elapsed.Seconds(), ms(percentile(lat, 50)), ms(percentile(lat, 99)))
		db1 := probe.sample(ctx)
		round := fmt.Sprintf("standard_%d_", n)
		c.figures.add(round+"executions_per_s", float64(n)/elapsed.Seconds())
		c.figures.add(round+"transitions_per_s", float64(n*10)/elapsed.Seconds())
		c.figures.add(round+"p50_ms", ms(percentile(lat, 50)))
		c.figures.add(round+"p99_ms", ms(percentile(lat, 99)))
		c.figures.add(round+"server_cpu_us_per_transition", cpu/float64(n*10)*1e6)
		c.figures.add(round+"client_cpu_us_per_transition", client/float64(n*10)*1e6)
		fmt.Fprintf(c.Out, "scale standard %6d executions: %d nodes, %8.0f transitions/s per node, server cpu %.0f µs, client cpu %.0f µs per transition%s%s\n",
			n, c.nodes, float64(n*10)/elapsed.Seconds()/float64(c.nodes), cpu/float64(n*10)*1e6, client/float64(n*10)*1e6,
			db0.perUnit(db1, n*10, "transition"), machineShare(busy0, busy1, elapsed.Seconds(), cpu, client, db0, db1))
	}
	if c.syncCalls > 0 {
		cpu0, client0 := c.serversCPU(), selfCPU()
		elapsed, err := c.sync(ctx, callers, express, c.syncCalls)
		if err != nil {
			return err
		}
		cpu, client := c.serversCPU()-cpu0, (selfCPU() - client0).Seconds()
		calls := float64(c.syncCalls)
		fmt.Fprintf(c.Out, "express  %6d sync calls: %8.0f StartSyncExecution/s, server cpu %.0f µs, client cpu %.0f µs per call\n",
			c.syncCalls, calls/elapsed.Seconds(), cpu/calls*1e6, client/calls*1e6)
		c.figures.add("sync_calls_per_s", calls/elapsed.Seconds())
		c.figures.add("sync_server_cpu_us_per_call", cpu/calls*1e6)
		c.figures.add("sync_client_cpu_us_per_call", client/calls*1e6)
	}
	if c.activityRuns > 0 {
		db0 := probe.sample(ctx)
		db0.cpu = probe.cpu()
		client0, busy0 := selfCPU(), machineBusy()
		elapsed, cpu, err := c.activities(ctx, clients, callers)
		if err != nil {
			return err
		}
		client, busy1 := (selfCPU() - client0).Seconds(), machineBusy()
		total += c.activityRuns
		tasks := c.activityRuns * c.activitySteps
		db1 := probe.sample(ctx)
		c.figures.add("activity_tasks_per_s", float64(tasks)/elapsed.Seconds())
		c.figures.add("activity_server_cpu_us_per_task", cpu/float64(tasks)*1e6)
		c.figures.add("activity_client_cpu_us_per_task", client/float64(tasks)*1e6)
		fmt.Fprintf(c.Out, "scale activities %d tasks: %d nodes, %8.0f tasks/s per node, server cpu %.0f µs, client cpu %.0f µs per task%s%s\n",
			tasks, c.nodes, float64(tasks)/elapsed.Seconds()/float64(c.nodes), cpu/float64(tasks)*1e6, client/float64(tasks)*1e6,
			db0.perUnit(db1, tasks, "task"), machineShare(busy0, busy1, elapsed.Seconds(), cpu, client, db0, db1))
	}
	if c.stored > total {
		if _, _, err := c.standard(ctx, callers, standard, "fill-", c.stored-total); err != nil {
			return err
		}
		total = c.stored
	}
	fmt.Fprintf(c.Out, "cpu: server %.1f s, client %.1f s\n", c.serversCPU(), selfCPU().Seconds())
	rss, hwm := c.serversMemory()
	c.figures.add("server_cpu_s", c.serversCPU())
	c.figures.add("server_resident_mb", float64(rss)/1e6)
	c.figures.add("server_peak_resident_mb", float64(hwm)/1e6)
	size := fileSize(db) + fileSize(db+"-wal")
	fmt.Fprintf(c.Out, "server memory with %d finished executions stored: %.1f MB resident, %.1f MB peak\n", total, float64(rss)/1e6, float64(hwm)/1e6)
	if total > 0 && !shared {
		fmt.Fprintf(c.Out, "database: %.1f MB, %.0f bytes per execution\n", float64(size)/1e6, float64(size)/float64(total))
		c.figures.add("database_bytes_per_execution", float64(size)/float64(total))
	}
	if c.rest > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.rest):
		}
		var anon, file int64
		for _, pid := range c.pids {
			m := procMemory(pid)
			anon, file = anon+m.anon, file+m.file
		}
		c.figures.add("server_rest_resident_mb", float64(anon+file)/1e6)
		fmt.Fprintf(c.Out, "server memory at rest, %s after the load: %.1f MB resident (%.1f MB anonymous, %.1f MB mapped from files)\n",
			c.rest, float64(anon+file)/1e6, float64(anon)/1e6, float64(file)/1e6)
	}
	return nil
}

// standard runs n executions and returns each one's start-to-finish time.
// Each worker starts its executions on one server and describes them on
// the next one, so that with several servers every read crosses nodes.
func (c *benchCommand) standard(ctx context.Context, callers []benchCaller, arn, prefix string, n int) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	begin := time.Now()
	for w := range c.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client, reader := callers[w%len(callers)], callers[(w+1)%len(callers)]
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t0 := time.Now()
				execArn, err := client.startExecution(ctx, arn, prefix+strconv.Itoa(i), benchInput)
				for err == nil {
					var status string
					status, err = reader.executionStatus(ctx, execArn)
					if err == nil && status != string(types.ExecutionStatusRunning) {
						if status != string(types.ExecutionStatusSucceeded) {
							err = fmt.Errorf("execution %s ended %s", execArn, status)
						}
						break
					}
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(begin), firstErr
}

// sync runs n StartSyncExecution calls.
func (c *benchCommand) sync(ctx context.Context, callers []benchCaller, arn string, n int) (time.Duration, error) {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	begin := time.Now()
	for w := range c.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := callers[w%len(callers)]
			for next.Add(1) <= int64(n) {
				status, err := client.startSync(ctx, arn, benchInput)
				if err == nil && status != string(types.SyncExecutionStatusSucceeded) {
					err = fmt.Errorf("sync execution ended %s", status)
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(begin), firstErr
}

// benchClient returns an SDK client for endpoint with the sync- host prefix
// turned off, keeping up to conns idle connections: the SDK's default of
// 10 a host would close and reopen a connection for most calls of more
// concurrent clients.
func benchClient(ctx context.Context, endpoint string, conns int, keyID, secret string) (*sfn.Client, error) {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = conns
		tr.MaxIdleConnsPerHost = conns
	})
	cfg, err := awsconfig.LoadDefaultConfig(ctx,
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithRegion(DefaultRegion),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(keyID, secret, "")),
	)
	if err != nil {
		return nil, err
	}
	noPrefix := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("StepwiseDisableHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	}
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.APIOptions = append(o.APIOptions, noPrefix)
	}), nil
}

// benchKey is the key pair the load generator signs with: the first key
// (by access key id) of the server's --credentials file when the server
// arguments name one (the server then checks signatures), a dummy pair
// otherwise.
func benchKey(serverArgs []string) (keyID, secret string, err error) {
	path := ""
	for i, a := range serverArgs {
		if v, ok := strings.CutPrefix(a, "--credentials="); ok {
			path = v
		} else if a == "--credentials" && i+1 < len(serverArgs) {
			path = serverArgs[i+1]
		}
	}
	if path == "" {
		return "bench", "bench", nil
	}
	creds, err := sigv4auth.LoadCredentials(path)
	if err != nil {
		return "", "", err
	}
	keyID = creds.AccessKeyIDs()[0]
	secret, _ = creds.Secret(keyID)
	return keyID, secret, nil
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// procMem is a process's memory from /proc/PID/status, in bytes (0
// where it is not available): resident, peak resident, and the resident
// in two, anonymous (its heap, stacks, caches) and mapped from files (its
// program's code and read-only data, shared and clean).
type procMem struct{ rss, hwm, anon, file int64 }

func procMemory(pid int) procMem {
	var m procMem
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb * 1024
		case "VmHWM:":
			m.hwm = kb * 1024
		case "RssAnon:", "RssShmem:":
			m.anon += kb * 1024
		case "RssFile:":
			m.file = kb * 1024
		}
	}
	return m
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// procCPU returns the user+system CPU seconds a process used, from /proc.
func procCPU(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at ')'.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks; 100 per second on Linux
}

// activities times executions made of sequential activity tasks worked by
// concurrent pollers. At most --activity-inflight executions run at once
// (a new one starts when one ends), so the server is measured in a steady
// state rather than with every task queued at once. It reports tasks/s,
// executions/s, the time from a task's scheduling (the previous task's
// completion, or the start) to its completion, the CPU both sides spent
// per task and the server's resident memory.
func (c *benchCommand) activities(ctx context.Context, clients benchClients, callers []benchCaller) (elapsed time.Duration, serverCPU float64, err error) {
	client := clients[0]
	act, err := client.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("bench-work")})
	if err != nil {
		return 0, 0, err
	}
	var states []string
	for i := range c.activitySteps {
		next := `"End": true`
		if i < c.activitySteps-1 {
			next = fmt.Sprintf(`"Next": "T%d"`, i+1)
		}
		states = append(states, fmt.Sprintf(`"T%d": {"Type": "Task", "Resource": %q, %s}`, i, aws.ToString(act.ActivityArn), next))
	}
	def := `{"StartAt": "T0", "States": {` + strings.Join(states, ",") + `}}`
	sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("bench-activities"), Definition: aws.String(def), RoleArn: aws.String(DefaultRoleArn),
	})
	if err != nil {
		return 0, 0, err
	}
	inflight := c.inflight
	if inflight <= 0 {
		inflight = c.activityRuns
	}
	want := c.activityRuns * c.activitySteps
	var handled atomic.Int64
	lat := make([]time.Duration, want)
	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	fail := func(err error) {
		once.Do(func() { firstErr = err })
		stop()
	}
	// Each task's input is its predecessor's output: when it was completed
	// and how many tasks of the execution are done. The first task's is
	// the execution input, sent at start.
	type taskInput struct{ Sent, Step int64 }
	slots := make(chan struct{}, inflight) // a slot per running execution
	cpu0, usage0 := c.serversCPU(), selfCPU()
	begin := time.Now()
	for w := range c.pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := callers[w%len(callers)]
			worker := fmt.Sprintf("bench-%d", w)
			activityArn := aws.ToString(act.ActivityArn)
			for pollCtx.Err() == nil {
				token, input, err := caller.getActivityTask(pollCtx, activityArn, worker)
				if pollCtx.Err() != nil {
					return
				}
				if err != nil {
					fail(err)
					return
				}
				if token == "" {
					continue
				}
				var in taskInput
				if err := json.Unmarshal([]byte(input), &in); err != nil {
					fail(fmt.Errorf("task input %q: %w", input, err))
					return
				}
				out := fmt.Sprintf(`{"Sent": %d, "Step": %d}`, time.Now().UnixNano(), in.Step+1)
				if err := caller.sendTaskSuccess(ctx, token, out); err != nil {
					fail(err)
					return
				}
				i := handled.Add(1) - 1
				lat[i] = time.Since(time.Unix(0, in.Sent))
				if in.Step+1 == int64(c.activitySteps) {
					<-slots // the execution has ended
				}
				if i+1 == int64(want) {
					stop()
				}
			}
		}()
	}
	var next atomic.Int64
	for w := range min(c.concurrency, inflight) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := clients.at(w)
			for {
				i := next.Add(1) - 1
				if i >= int64(c.activityRuns) {
					return
				}
				select {
				case slots <- struct{}{}:
				case <-pollCtx.Done():
					return
				}
				if _, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn,
					Name: aws.String(fmt.Sprintf("a%d", i)), Input: aws.String(fmt.Sprintf(`{"Sent": %d, "Step": 0}`, time.Now().UnixNano()))}); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	elapsed = time.Since(begin)
	serverCPU, clientCPU := c.serversCPU()-cpu0, (selfCPU() - usage0).Seconds()
	rss, _ := c.serversMemory()
	fmt.Fprintf(c.Out, "activities %d executions × %d tasks, %d pollers, %d in flight: %8.0f tasks/s %6.0f executions/s  schedule→completion p50 %6.2f ms p99 %6.2f ms\n",
		c.activityRuns, c.activitySteps, c.pollers, inflight, float64(want)/elapsed.Seconds(), float64(c.activityRuns)/elapsed.Seconds(), ms(percentile(lat, 50)), ms(percentile(lat, 99)))
	fmt.Fprintf(c.Out, "activities cpu per task: server %.0f µs, client %.0f µs; server %.1f MB resident\n",
		serverCPU/float64(want)*1e6, clientCPU/float64(want)*1e6, float64(rss)/1e6)
	return elapsed, serverCPU, nil
}

// startServer starts a server on db and returns its address, its pid and
// a function that stops it.
func (c *benchCommand) startServer(self, db string) (addr string, pid int, stop func(), err error) {
	srv := exec.Command(self, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, c.serverArgs...)...)
	if c.serverCommand != "" {
		srv = exec.Command(c.serverCommand, c.serverArgs...)
	}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	srv.Stderr = c.Err
	if err := srv.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start server: %w", err)
	}
	stop = func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		stop()
		return "", 0, nil, errors.New("the server printed nothing")
	}
	m := benchListenRE.FindStringSubmatch(lines.Text())
	if m == nil {
		stop()
		return "", 0, nil, fmt.Errorf("unexpected server output %q", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return m[1], srv.Process.Pid, stop, nil
}
