package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
	"stepwise/config"
	"stepwise/deploy"
	"stepwise/engine"
	"stepwise/integration/lambda"
	"stepwise/integration/mock"
	"stepwise/integration/standard"
	"stepwise/internal/defcache"
	"stepwise/internal/retention"
	"stepwise/internal/security/authn"
	"stepwise/internal/security/certfile"
	"stepwise/internal/security/quota"
	"stepwise/internal/security/sigv4auth"
	"stepwise/observe/metrics"
	"stepwise/observe/notify"
	"stepwise/store"
)

type serveCommand struct {
	*CommandBase
	cfg config.Serve
	// ready, when set, receives the address the server listens on (tests).
	ready func(addr string)
	// stop, when set, ends the server like a signal does (tests).
	stop <-chan struct{}
	// cpuProfile, when set, is a file to write a CPU profile to.
	cpuProfile string
	// pprofAddr, when set, is an address serving net/http/pprof, with
	// mutex and block profiling turned on.
	pprofAddr string
	// functions are the --function values, NAME=COMMAND or
	// NAME=RUNTIME:DIR:HANDLER.
	functions []string
	// mockConfig is the mock configuration file (--mock-config, else
	// $SFN_MOCK_CONFIG).
	mockConfig string
	// events are where status-change events go.
	events eventFlags
	traces traceFlags
	// metrics serves /metrics (--metrics=false turns it and the counting off).
	metrics bool
	// quotaPreset and quotaSpecs are --quotas and the --quota values.
	quotaPreset string
	quotaSpecs  []string
	// templates are the --template files (or cdk.outs) deployed at
	// start, with the --parameter-overrides values.
	templates      []string
	templateParams []string
	templateAdopt  bool
}

func (c *serveCommand) command() *cobra.Command {
	c.cfg = config.DefaultServe()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the AWS Step Functions API",
		Long: `Serve the AWS Step Functions API (AWS JSON 1.0) on a durable engine.
Point any AWS SDK or the AWS CLI at it, for example:

  aws stepfunctions --endpoint-url http://127.0.0.1:8083 list-state-machines

Data lives in one SQLite file (--db). SIGINT or SIGTERM stops the server
gracefully: requests in flight finish and every accepted step is committed;
an expression still evaluating is abandoned, its step run again after a
restart. GET /health answers 503 while the database cannot be written;
GET /healthz answers 200 while the process is alive, GET /readyz once the
executions running at start are resumed and while the database takes
writes.

Executions are deleted with their history --retention after they ended
(90 days by default, as AWS keeps them), in small batches that leave the
engine's commits through.

Every evaluation of a JSONata expression, JSONPath query or intrinsic
function runs under --eval-steps, --eval-bytes and --eval-time: past one,
its state fails (States.QueryEvaluationError, or States.DataLimitExceeded
for bytes), so no definition can hold a core or take gigabytes.

Time: Wait states, retry back-offs and timeouts are timers, and they fire in
the order of their deadlines in execution time, which history timestamps
show. By default execution time is real time. --time-skip makes the server
skip time like a time-skipping test server: whenever every execution only
waits on timers, the clock jumps to the next one (a Wait of a day ends at
once, stamped a day later); while any task waits on an activity worker, a
callback or a service, time runs at the real rate, so a Task's
TimeoutSeconds and HeartbeatSeconds hold as on AWS. --wait-time-scale F is
a plain scale instead: timers take F times their time and execution time
runs 1/F times as fast, for tasks too; 0 fires every timer at once, task
timeouts included. Such a clock is kept in the database: after a restart it
resumes where it stopped, and a cluster's servers share it. The clock never
jumps to a schedule's slot for its own sake (an idle server stays put);
stepwise clock advance moves it by hand, running the slots it passes.

Quotas (off by default) throttle the server as AWS throttles an account,
with token buckets: --quotas aws sets AWS's default quotas (us-east-1),
--quota OPERATION=BUCKET/REFILL_PER_SECOND sets one (and overrides the
preset's), e.g. --quota StartExecution=1300/300. A request its bucket
refuses is answered ThrottlingException, which clients retry;
--quota StateTransition=5000/5000 delays the steps of STANDARD executions
instead.

Authentication (off by default): --credentials FILE, an AWS
shared-credentials file ([profile] sections of aws_access_key_id and
aws_secret_access_key), makes every API request need a SigV4 signature of
one of its keys, as AWS does; the console asks to sign in with one of
them. The probes (/healthz, /readyz, /health) and /metrics stay open.
Without --credentials the server listens only on a loopback address
(--addr 127.0.0.1:PORT or localhost:PORT) unless --insecure is given.
Without --credentials the server also answers only requests sent to its
own names (their Host header): localhost, an IP address, the --addr host
and the names given with --allowed-host NAME; others are refused 403, so
that no web page whose name re-resolves to this machine (DNS rebinding)
can use it. The probes and /metrics answer any Host.

HTTP Tasks (arn:aws:states:::http:invoke) call public https:// endpoints
only, as on AWS: plain http:// and loopback, private, link-local and other
non-public addresses (checked after DNS resolution, and on every redirect)
fail the task with States.Http.Socket. --http-task-allow lets them call the
hosts, addresses and networks it lists, over plain http:// too, e.g.
--http-task-allow 127.0.0.1:9000,stub.internal,10.0.0.0/8.

TLS: --tls-cert FILE --tls-key FILE serve HTTPS (HTTP/1.1 and HTTP/2).
SIGHUP reads the certificate and the credentials file again; a file that
does not load is logged and the server keeps what it had.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&c.cfg.Addr, "addr", c.cfg.Addr, "address to listen on")
	f.StringVar(&c.cfg.DB, "db", c.cfg.DB, "SQLite database file (\":memory:\" for a throwaway store), or a postgres:// URL (PG* environment variables fill in what it leaves out)")
	f.IntVar(&c.cfg.DBPoolMax, "db-pool-max", 0, "most connections to a PostgreSQL database (0: the URL's pool_max_conns, else the larger of 4 and the CPUs)")
	f.DurationVar(&c.cfg.Lease, "lease", 0, "on a postgres:// database, how long this server's executions stay its own without a renewal: the work of a server that dies is taken over within about this plus a second (default 10s)")
	f.StringVar(&c.cfg.NodeID, "node-id", "", "this server's name among the servers of its database, in logs and metrics (default: the host name and a random suffix)")
	f.StringVar(&c.cfg.Region, "region", c.cfg.Region, "region in the ARNs the server hands out")
	f.StringVar(&c.cfg.Account, "account", c.cfg.Account, "account id in the ARNs the server hands out")
	f.BoolVar(&c.cfg.TimeSkip, "time-skip", false, "skip time while every execution only waits on timers; real time while a task is outstanding")
	f.Float64Var(&c.cfg.WaitTimeScale, "wait-time-scale", c.cfg.WaitTimeScale, "real seconds per second of execution time: timers take F times as long (0: every timer at once, task timeouts included)")
	f.Float64Var(&c.cfg.Prices.Transition, "transition-price", c.cfg.Prices.Transition, "US dollars a state transition of a STANDARD execution costs on AWS (the console's and the metrics' estimates)")
	f.Float64Var(&c.cfg.Prices.ExpressRequest, "express-request-price", c.cfg.Prices.ExpressRequest, "US dollars an EXPRESS execution costs on AWS, besides its duration")
	f.Float64Var(&c.cfg.Prices.ExpressGBSecond, "express-gb-second-price", c.cfg.Prices.ExpressGBSecond, "US dollars a GB-second of an EXPRESS execution costs on AWS")
	f.IntVar(&c.cfg.PayloadLimit, "payload-limit", c.cfg.PayloadLimit, "largest execution input and state output in bytes")
	f.Int64Var(&c.cfg.Eval.Steps, "eval-steps", c.cfg.Eval.Steps, "most steps one evaluation of a JSONata expression, JSONPath query or intrinsic function may take (0: no limit)")
	f.Int64Var(&c.cfg.Eval.Bytes, "eval-bytes", c.cfg.Eval.Bytes, "most bytes of values one evaluation may build (0: no limit)")
	f.DurationVar(&c.cfg.Eval.Time, "eval-time", c.cfg.Eval.Time, "longest time one evaluation may run (0: no limit)")
	f.StringVar(&c.cfg.Integrations.AWSEndpoint, "aws-endpoint", "", "URL every AWS service call of a Task state goes to (e.g. a local emulator)")
	f.StringToStringVar(&c.cfg.Integrations.Endpoints, "endpoint", nil, "URL the calls to one service go to, as service=URL (repeatable)")
	f.StringToStringVar(&c.cfg.Calendars, "calendar", nil, "business calendar schedules may name in their group's stepwise:calendar tags, as NAME=FILE: a file of the days off, one YYYY-MM-DD a line, # comments, \"weekend sat sun\" by default (repeatable)")
	f.StringVar(&c.mockConfig, "mock-config", "", "mock configuration file in Step Functions Local's MockConfigFile format (default $"+mock.EnvFile+"); start \"<stateMachineArn>#<TestCase>\" to run a test case")
	f.StringVar(&c.cfg.Integrations.ConnectionsFile, "connections", "", "JSON file of the EventBridge connections (auth and invocation parameters) HTTP Tasks name in Authentication.ConnectionArn")
	f.StringSliceVar(&c.cfg.Integrations.HTTPTaskAllow, "http-task-allow", nil, "let HTTP Tasks call these non-public hosts, addresses or networks, over plain http:// too: a comma-separated `LIST` of HOST[:PORT], ADDRESS[:PORT], [IPV6]:PORT or CIDR (repeatable; by default only public https:// endpoints, as on AWS)")
	f.StringArrayVar(&c.functions, "function", nil, "run Lambda function NAME locally: NAME=COMMAND, a shell command reading the event JSON on stdin and printing the result JSON; or a Lambda handler, imported once and run warm by python3 or node, NAME=python:DIR:module.function or NAME=node:DIR:file.function (repeatable)")
	f.DurationVar(&c.cfg.ReadHeaderTimeout, "read-header-timeout", c.cfg.ReadHeaderTimeout, "longest time a client may take to send a request's headers")
	f.DurationVar(&c.cfg.ReadTimeout, "read-timeout", c.cfg.ReadTimeout, "longest time a client may take to send a whole request, headers and body (long polls are not bounded by it)")
	f.DurationVar(&c.cfg.IdleTimeout, "idle-timeout", c.cfg.IdleTimeout, "how long a kept-alive connection may wait for its next request")
	f.IntVar(&c.cfg.MaxHeaderBytes, "max-header-bytes", c.cfg.MaxHeaderBytes, "largest header block of a request in bytes")
	f.StringVar(&c.quotaPreset, "quotas", "", `throttle with AWS's default quotas: "aws" (default: no quotas)`)
	f.StringArrayVar(&c.templates, "template", nil, "deploy a CloudFormation or SAM template, or a CDK app's cdk.out, as the server starts (repeatable; see `stepwise deploy`)")
	f.StringArrayVar(&c.templateParams, "parameter-overrides", nil, "a parameter of the --template templates, KEY=VALUE (repeatable)")
	f.BoolVar(&c.templateAdopt, "adopt", false, "a --template stack takes over a named resource that is there and that it did not make, and deletes it with the stack (without it such a resource fails the deploy)")
	f.StringArrayVar(&c.quotaSpecs, "quota", nil, "throttle an API operation, or StateTransition, by a token bucket: OPERATION=BUCKET/REFILL_PER_SECOND (repeatable; overrides --quotas)")
	f.Var(daysValue{&c.cfg.Retention}, "retention", "delete executions this long after they ended, with their history: a duration or days, e.g. 90d or 2160h (0: keep every execution)")
	f.Var(daysValue{&c.cfg.RetentionInterval}, "retention-interval", "time between two passes of the deletion of old executions")
	f.StringVar(&c.cfg.Credentials, "credentials", "", "AWS shared-credentials file: require every API request to be signed (SigV4) with one of its access keys, and a sign-in to the console")
	f.BoolVar(&c.cfg.Insecure, "insecure", false, "allow serving without --credentials on an address other than a loopback one")
	f.StringArrayVar(&c.cfg.AllowedHosts, "allowed-host", nil, "without --credentials, also answer requests to this host name (their Host), besides localhost, IP addresses and the --addr host: NAME, .DOMAIN for the domain and the names under it, or * for any (repeatable)")
	f.StringVar(&c.cfg.TLSCert, "tls-cert", "", "PEM file of the server's certificate (chain): serve HTTPS (with --tls-key)")
	f.StringVar(&c.cfg.TLSKey, "tls-key", "", "PEM file of the certificate's private key (with --tls-cert)")
	c.events.register(f)
	c.traces.register(f)
	f.BoolVar(&c.metrics, "metrics", true, "serve Prometheus metrics at GET /metrics")
	f.StringVar(&c.cfg.ExecutionLogs.To, "execution-logs", c.cfg.ExecutionLogs.To, "where executions' logs go when their state machine's loggingConfiguration asks for them: auto (CloudWatch Logs when an endpoint is set for logs, else files), files, cloudwatch or off")
	f.StringVar(&c.cfg.ExecutionLogs.Dir, "logs-dir", "", "folder of the execution log files, a folder per log group (default: the database's path with .logs added)")
	f.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the server's run to this file")
	f.MarkHidden("cpuprofile")
	f.StringVar(&c.pprofAddr, "pprof", "", "serve net/http/pprof (with mutex and block profiles) on this address")
	f.MarkHidden("pprof")
	return cmd
}

func (c *serveCommand) run(ctx context.Context) error {
	fns, err := config.ParseFunctions(c.functions)
	if err != nil {
		return &UsageError{err.Error()}
	}
	if fns != nil {
		c.cfg.Integrations.Functions = fns
	}
	limits, err := quota.Parse(c.quotaPreset, c.quotaSpecs)
	if err != nil {
		return &UsageError{err.Error()}
	}
	if limits != nil {
		c.cfg.Quotas = limits
	}
	if err := c.cfg.Validate(); err != nil {
		return &UsageError{err.Error()}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	log := c.Logger
	var creds *sigv4auth.Credentials
	if c.cfg.Credentials != "" {
		if creds, err = loadCredentials(c.cfg.Credentials, log); err != nil {
			return err
		}
	}
	var cert *certfile.Holder
	if c.cfg.TLSCert != "" {
		if cert, err = certfile.Load(c.cfg.TLSCert, c.cfg.TLSKey); err != nil {
			return err
		}
	}
	tuneGC()
	go returnIdleMemory(ctx, idleMemoryEvery, readHeap, debug.FreeOSMemory)
	stopProfile, err := startCPUProfile(c.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if c.pprofAddr != "" {
		if err := servePprof(c.pprofAddr); err != nil {
			return err
		}
	}
	node := nodeID(&c.cfg)
	if c.cfg.Postgres() {
		log = log.With("node", node)
	}
	drv, where, err := openStore(ctx, &c.cfg, log)
	if err != nil {
		return err
	}
	defer drv.Close()
	// The key of task tokens lives with the data, so tokens handed out
	// before a restart still work after it.
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return err
	}
	tokenKey, err := drv.Executor().MetaGetOrPut(ctx, "task-token-key", fresh)
	if err != nil {
		return fmt.Errorf("task token key: %w", err)
	}
	tasks, err := standard.ForServe(&c.cfg, log)
	if err != nil {
		return err
	}
	// Deferred before the engine stops: local functions' processes are
	// stopped after the last task that may use them.
	defer tasks.Close()
	local := lambda.LocalOf(tasks)
	if local != nil {
		// Before any invoke: what functions of a server that died left
		// running is killed, and this server's are recorded.
		killed, err := local.RecordGroups(c.cfg.FunctionGroupsDir())
		if err != nil {
			log.Warn("serve: the local functions' processes are not recorded", "error", err)
		}
		if killed > 0 {
			log.Info("serve: killed the local functions' processes a server that died left", "processes", killed)
		}
	}
	mocks, err := loadMockConfig(c.mockConfig)
	if err != nil {
		return err
	}
	var met *metrics.Metrics
	if c.metrics {
		met = metrics.New()
		met.SetPrices(c.cfg.Prices)
		met.Node(node)
	}
	// Executions' logs are written until the engine has stopped.
	logs, err := startLogs(ctx, &c.cfg, drv, met, log)
	if err != nil {
		return err
	}
	defer logs.close()
	// The engine and the service share one cache of parsed definitions.
	defs := defcache.New(0)
	engCfg := engine.Config{
		Definitions:   defs,
		Tasks:         tasks,
		Region:        c.cfg.Region,
		Account:       c.cfg.Account,
		WaitTimeScale: c.cfg.WaitTimeScale,
		TimeSkip:      c.cfg.TimeSkip,
		PayloadLimit:  c.cfg.PayloadLimit,
		EvalLimits:    c.cfg.Eval.Budget(),
		TokenKey:      tokenKey,
		Logger:        log,
	}
	if c.cfg.Postgres() {
		engCfg.Cluster = &engine.ClusterConfig{Node: node, Lease: c.cfg.Lease}
	}
	// A virtual clock starts after every slot fired, even those fired
	// before the store kept the clock.
	engCfg.ClockFloor = func(ctx context.Context) (time.Time, error) { return lastFired(ctx, drv.Executor()) }
	if mocks != nil {
		engCfg.Mocks = mocks
	}
	var observers observers
	if met != nil {
		observers = append(observers, met)
	}
	// Of the servers sharing a database, one delivers the events: the
	// engine, made below, knows which.
	var leader atomic.Pointer[engine.Engine]
	leads := func(ctx context.Context) bool {
		e := leader.Load()
		return e != nil && e.Leads(ctx)
	}
	deliverer, err := c.events.deliverer(ctx, &c.cfg, drv.Executor(), met, leads, log)
	if err != nil {
		return &UsageError{err.Error()}
	}
	if deliverer != nil {
		engCfg.StatusNotice = notify.Notice
		observers = append(observers, nudger{deliverer})
		deliveries, stopDeliveries := context.WithCancel(context.WithoutCancel(ctx))
		delivered := make(chan struct{})
		go func() { deliverer.Run(deliveries); close(delivered) }()
		defer func() { stopDeliveries(); <-delivered }()
	}
	observers = append(observers, logs.observers()...)
	// Traces are exported until the engine has stopped.
	tracer, stopTracer, err := c.traces.start(ctx, drv.Executor(), log)
	if err != nil {
		return err
	}
	defer stopTracer()
	wireTracer(tracer, &engCfg, &observers)
	if len(observers) > 0 {
		engCfg.Observer = observers
	}
	quotas := newQuotas(c.cfg.Quotas, met)
	if quotas.Transitions() {
		engCfg.Transitions = quotas
	}
	eng, err := engine.New(drv, engCfg)
	if err != nil {
		return err
	}
	leader.Store(eng)
	if met != nil {
		met.WatchEngine(eng)
	}
	// The functions of the stacks deployed before are back before an
	// execution resumes: a task re-dispatched after a restart invokes
	// the local function, never the Lambda API. Those of --template
	// deploy once the service is up: until then invokes wait.
	if err := restoreFunctions(ctx, drv.Executor(), local); err != nil {
		log.Warn("serve: a deployed stack's functions are not back", "error", err)
	}
	releaseInvokes := func() {}
	if len(c.templates) > 0 && local != nil {
		releaseInvokes = local.Hold()
	}
	if err := eng.Start(ctx); err != nil {
		releaseInvokes()
		return fmt.Errorf("start engine: %w", err)
	}
	defer eng.Stop()
	// Run before the engine stops, which waits for the tasks held.
	defer releaseInvokes()
	if c.cfg.Retention > 0 {
		stopRetention, err := startRetention(ctx, &c.cfg, drv.Executor(), eng, met, log)
		if err != nil {
			return err
		}
		defer stopRetention()
	}
	var auth *apiAuth
	if creds != nil {
		// The key of session cookies lives with the data, as the task
		// tokens' does: sessions outlive a restart.
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return err
		}
		key, err := drv.Executor().MetaGetOrPut(ctx, "console-session-key", fresh)
		if err != nil {
			return fmt.Errorf("session key: %w", err)
		}
		auth = &apiAuth{credentials: creds, sessionKey: key}
	}
	api, err := newAPI(&c.cfg, drv, eng, defs, tasks, mocks, met, quotas, auth, log, logs.service, tracerHook(tracer))
	if err != nil {
		return err
	}
	// The server's own Task states call the API in-process, unsigned.
	tasks.SetSelf(api.calls.Call)
	// Templates deploy onto it (stepwise deploy, --template).
	dep := newDeployer(&c.cfg, api, drv.Executor(), local, log)
	api.handleDeploy(dep)
	if err := deployTemplates(ctx, dep, c.templates, c.templateParams, c.templateAdopt, func(r *deploy.Report) { r.WriteText(c.Err) }); err != nil {
		return err
	}
	releaseInvokes()
	// Schedules fire on the leader, in execution time.
	defer api.startSchedules(ctx, eng)()
	ln, err := net.Listen("tcp", c.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.cfg.Addr, err)
	}
	if creds == nil && !c.cfg.Insecure {
		// A name (checked only now) may stand for an address others
		// can reach.
		if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
			ln.Close()
			return &UsageError{config.NotLoopbackError(c.cfg.Addr).Error()}
		}
	}
	srv := &http.Server{
		Handler:           requestLog(log, api.handler),
		ReadHeaderTimeout: c.cfg.ReadHeaderTimeout,
		// Bounds reading the header block and the body; the server lifts
		// the deadline once the body is read, so a long poll outlasts it.
		ReadTimeout:    c.cfg.ReadTimeout,
		IdleTimeout:    c.cfg.IdleTimeout,
		MaxHeaderBytes: c.cfg.MaxHeaderBytes,
		// Long polls look at their connection to see a client leave.
		ConnContext: awsjson.ConnContext,
		// No WriteTimeout: a GetActivityTask long poll answers after up
		// to a minute and StartSyncExecution when its execution ends.
	}
	ln = awsjson.Listener(ln, c.cfg.MaxHeaderBytes)
	// Long polls end at once on shutdown rather than holding it for up to
	// a minute.
	srv.RegisterOnShutdown(eng.ReleasePolls)
	scheme := "http"
	if cert != nil {
		scheme = "https"
		srv.TLSConfig = cert.Config()
		log.Info("serve: TLS", "certificate", cert.Describe(time.Now()))
	}
	if creds != nil {
		log.Info("serve: requests must be signed", "credentials", c.cfg.Credentials, "access_keys", creds.Len())
	}
	fmt.Fprintf(c.Out, "stepwise: serving the Step Functions API on %s://%s (data in %s, node %s)\n", scheme, ln.Addr(), where, node)
	if c.ready != nil {
		c.ready(ln.Addr().String())
	}

	errc := make(chan error, 1)
	go func() {
		if cert != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	// SIGHUP reloads what can be reloaded; without anything to reload it
	// keeps its default (ending the process).
	var hup chan os.Signal
	if cert != nil || creds != nil {
		hup = make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
loop:
	for {
		select {
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		case s := <-sig:
			fmt.Fprintf(c.Out, "stepwise: %s received, shutting down\n", s)
			break loop
		case <-c.stop:
			break loop
		case <-hup:
			c.reload(cert, api.gate, log)
		case <-eng.Lost():
			// Another server may own this one's executions now: stop at
			// once (a supervisor starts it again, and it rejoins).
			eng.Halt()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
			return fmt.Errorf("serve: this server lost its lease on the database: %w", eng.LostErr())
		}
	}
	// Evaluations in flight are abandoned (their steps are not committed,
	// and run again after a restart), so no expression holds the
	// shutdown up.
	eng.Halt()
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// startRetention runs the deletion of old executions until the returned
// function is called, which waits for a batch under way.
func startRetention(ctx context.Context, cfg *config.Serve, st retention.Store, eng *engine.Engine, met *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	var onDeleted func(int, time.Duration)
	if met != nil {
		onDeleted = met.RetentionDeleted
	}
	cleaner, err := retention.New(retention.Config{
		OnDeleted: onDeleted,
		Store:     st,
		Period:    cfg.Retention,
		Interval:  cfg.RetentionInterval,
		Ready:     eng.Resumed(),
		Leads:     eng.Leads,
		// Stop dates are stamped in execution time.
		Now:    eng.Now,
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	log.Info("retention: executions are deleted after they ended", "retention", config.FormatDays(cfg.Retention),
		"interval", config.FormatDays(cfg.RetentionInterval))
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { cleaner.Run(rctx); close(done) }()
	return func() { cancel(); <-done }, nil
}

// reload reads the certificate and the credentials again (SIGHUP); what
// does not load is logged, and what the server had stays.
func (c *serveCommand) reload(cert *certfile.Holder, gate *authn.Gate, log *slog.Logger) {
	if cert != nil {
		if err := cert.Reload(); err != nil {
			log.Error("serve: certificate not reloaded, the previous one stays", "error", err)
		} else {
			log.Info("serve: certificate reloaded", "certificate", cert.Describe(time.Now()))
		}
	}
	if gate != nil {
		creds, err := loadCredentials(c.cfg.Credentials, log)
		if err != nil {
			log.Error("serve: credentials not reloaded, the previous ones stay", "error", err)
		} else {
			gate.SetCredentials(creds)
			log.Info("serve: credentials reloaded", "credentials", c.cfg.Credentials, "access_keys", creds.Len())
		}
	}
}

// loadCredentials reads a shared-credentials file, and warns when others
// than its owner may read it.
func loadCredentials(path string, log *slog.Logger) (*sigv4auth.Credentials, error) {
	creds, err := sigv4auth.LoadCredentials(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("serve: the credentials file can be read by others than its owner", "credentials", path, "mode", fi.Mode().Perm().String())
	}
	return creds, nil
}

// startCPUProfile writes a CPU profile to path ("": none) until stop is
// called.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// servePprof serves the runtime profiles on addr, for the life of the
// process, and turns on the mutex and block profiles.
func servePprof(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof: listen on %s: %w", addr, err)
	}
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	go http.Serve(ln, mux)
	return nil
}

// lastFired is the latest slot any schedule fired (zero when none).
func lastFired(ctx context.Context, exec store.ScheduleStore) (time.Time, error) {
	var last time.Time
	p := &store.ScheduleListParams{Limit: 500}
	for {
		rows, err := exec.ScheduleList(ctx, p)
		if err != nil {
			return time.Time{}, err
		}
		for _, row := range rows {
			if row.LastFired != nil && row.LastFired.After(last) {
				last = *row.LastFired
			}
		}
		if len(rows) < p.Limit {
			return last, nil
		}
		p.AfterGroup, p.AfterName = rows[len(rows)-1].GroupName, rows[len(rows)-1].Name
	}
}
