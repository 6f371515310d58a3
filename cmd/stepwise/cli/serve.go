package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/integration/mock"
	"stepwise/internal/boundedfile"
	"stepwise/internal/security/quota"
	"stepwise/observe/tracing"
	"stepwise/server"
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
	// sfnLocalEnv reads Step Functions Local's variables (AWS_DEFAULT_REGION,
	// LAMBDA_ENDPOINT, ...) into the flags left unset.
	sfnLocalEnv bool
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
(--addr 127.0.0.1:PORT or localhost:PORT) unless --insecure is given, or
--container: in a container, whose published port is the boundary, it
listens on any address, answers host names without a dot (stepwise) too,
and warns at start.
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
		Args:        cobra.NoArgs,
		Annotations: map[string]string{envAnnotation: "true"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if c.sfnLocalEnv {
				r, err := applySFNLocal(cmd.Flags(), c.LookupEnv)
				if err != nil {
					return err
				}
				c.Logger.Info("serve: Step Functions Local variables", r.attrs()...)
			}
			return c.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.cfg.Addr, "addr", c.cfg.Addr, "address to listen on")
	f.StringVar(&c.cfg.APIAddr, "api-addr", c.cfg.APIAddr, "address the deployed templates' APIs (their API Gateway routes) are served on, from the first route deployed, as sam local start-api (a loopback one unless --insecure)")
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
	f.StringArrayVar(&c.cfg.FileTriggerRoots, "file-trigger-root", nil, "folder under which the file-arrival triggers may watch a local folder (repeatable); without it, local folder triggers are refused")
	f.StringToStringVar(&c.cfg.Calendars, "calendar", nil, "business calendar schedules may name in their group's stepwise:calendar tags, as NAME=FILE: a file of the days off, one YYYY-MM-DD a line, # comments, \"weekend sat sun\" by default (repeatable)")
	f.StringVar(&c.mockConfig, "mock-config", "", "mock configuration file in Step Functions Local's MockConfigFile format (default $"+mock.EnvFile+"); start \"<stateMachineArn>#<TestCase>\" to run a test case")
	f.StringVar(&c.cfg.Integrations.ConnectionsFile, "connections", "", "JSON file of the EventBridge connections (auth and invocation parameters) HTTP Tasks name in Authentication.ConnectionArn")
	f.StringSliceVar(&c.cfg.Integrations.HTTPTaskAllow, "http-task-allow", nil, "let HTTP Tasks call these non-public hosts, addresses or networks, over plain http:// too: a comma-separated `LIST` of HOST[:PORT], ADDRESS[:PORT], [IPV6]:PORT or CIDR (repeatable; by default only public https:// endpoints, as on AWS)")
	f.StringArrayVar(&c.functions, "function", nil, "run Lambda function NAME locally: NAME=COMMAND, a shell command reading the event JSON on stdin and printing the result JSON; or a Lambda handler, imported once and run warm by python3 or node, NAME=python:DIR:module.function[@TIMEOUT] or NAME=node:DIR:file.function[@TIMEOUT], DIR relative to the working directory, TIMEOUT e.g. 900s (default 15m) (repeatable)")
	f.StringToStringVar(&c.cfg.Integrations.Runtimes, "runtime", nil, "interpreter of the local functions of a Python or Node.js runtime, as RUNTIME=PATH, e.g. python3.12=/usr/bin/python3.12 (repeatable; default python3 or node from PATH)")
	f.StringVar(&c.cfg.Integrations.BuildCache, "build-cache", "", "folder the local functions' dependencies (requirements.txt, package.json, the AWS SDK for JavaScript Lambda bundles) are installed into, kept between runs (default stepwise/builds under the user's cache folder)")
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
	f.BoolVar(&c.cfg.Container, "container", false, "this process runs in a container, whose network is the boundary: without --credentials, listen on any address (0.0.0.0; the port is reached only where it is published) and also answer host names without a dot (compose or CI service names such as stepwise); the cross-origin guard stays")
	f.StringArrayVar(&c.cfg.AllowedHosts, "allowed-host", nil, "without --credentials, also answer requests to this host name (their Host), besides localhost, IP addresses and the --addr host: NAME, .DOMAIN for the domain and the names under it, or * for any (repeatable)")
	f.StringVar(&c.cfg.TLSCert, "tls-cert", "", "PEM file of the server's certificate (chain): serve HTTPS (with --tls-key)")
	f.StringVar(&c.cfg.TLSKey, "tls-key", "", "PEM file of the certificate's private key (with --tls-cert)")
	c.events.register(f)
	c.traces.register(f)
	f.BoolVar(&c.metrics, "metrics", true, "serve Prometheus metrics at GET /metrics")
	f.StringVar(&c.cfg.ExecutionLogs.To, "execution-logs", c.cfg.ExecutionLogs.To, "where executions' logs go when their state machine's loggingConfiguration asks for them: auto (CloudWatch Logs when an endpoint is set for logs, else files), files, cloudwatch or off")
	f.StringVar(&c.cfg.ExecutionLogs.Dir, "logs-dir", "", "folder of the execution log files, a folder per log group (default: the database's path with .logs added)")
	f.BoolVar(&c.sfnLocalEnv, "sfn-local-env", false, "read Step Functions Local's environment variables into the flags neither the command line nor a STEPWISE_ variable gives: AWS_DEFAULT_REGION (--region), AWS_ACCOUNT_ID (--account), WAIT_TIME_SCALE (--wait-time-scale), LAMBDA_, BATCH_, DYNAMODB_, ECS_, GLUE_, SAGE_MAKER_, SQS_ and SNS_ENDPOINT (--endpoint SERVICE=URL), SFN_MOCK_CONFIG (--mock-config)")
	f.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the server's run to this file")
	f.MarkHidden("cpuprofile")
	f.StringVar(&c.pprofAddr, "pprof", "", "serve net/http/pprof (with mutex and block profiles) on this address")
	f.MarkHidden("pprof")
	cmd.Long += "\n\n" + envHelp(f)
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
	opts, err := c.options()
	if err != nil {
		return err
	}
	srv, err := server.New(c.cfg, opts...)
	if err != nil {
		return usage(err)
	}
	defer srv.Close()
	// A SIGINT or SIGTERM from here on shuts the server down in order:
	// while it starts, by ending the start's context (a --template deploy
	// waiting on a slow AWS endpoint, joining a cluster), then by the
	// loop below.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	starting, stopStarting := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stopStarting()
	if c.stop != nil {
		go func() {
			select {
			case <-c.stop:
				stopStarting()
			case <-starting.Done():
			}
		}()
	}
	if err := srv.Start(starting); err != nil {
		if starting.Err() != nil && ctx.Err() == nil {
			fmt.Fprintln(c.Out, "stepwise: stopped while starting")
			return nil
		}
		return usage(err)
	}
	stopStarting()
	if err := srv.Listen(); err != nil {
		return usage(err)
	}
	if c.cfg.Container && c.cfg.Credentials == "" {
		c.Logger.Warn(containerWarning(srv.Addr()))
	}
	fmt.Fprintf(c.Out, "stepwise: serving the Step Functions API on %s (data in %s, node %s)\n", srv.URL(), srv.Where(), srv.Node())
	if c.ready != nil {
		c.ready(srv.Addr().String())
	}

	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(stop) }()
	// SIGHUP reloads what can be reloaded; without anything to reload it
	// keeps its default (ending the process).
	var hup chan os.Signal
	if srv.Reloadable() {
		hup = make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	for {
		select {
		case err := <-served:
			// The HTTP server failed, or this server lost its lease on
			// the database (a supervisor starts it again, and it rejoins).
			return err
		case s := <-sig:
			fmt.Fprintf(c.Out, "stepwise: %s received, shutting down\n", s)
			cancel()
			return <-served
		case <-c.stop:
			cancel()
			return <-served
		case <-hup:
			srv.Reload()
		}
	}
}

// containerWarning is the warning of a server in a container without
// credentials, listening on addr.
func containerWarning(addr net.Addr) string {
	port := "8083"
	if a, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	return fmt.Sprintf("serve: without --credentials the API is open to whoever reaches the port the container publishes: "+
		"publish it on 127.0.0.1 (-p 127.0.0.1:%[1]s:%[1]s) or set STEPWISE_CREDENTIALS", port)
}

// options are the server's options the flags give besides c.cfg.
func (c *serveCommand) options() ([]server.Option, error) {
	opts := []server.Option{server.WithLogger(c.Logger), server.WithMetrics(c.metrics)}
	mocks, err := loadMockConfig(c.mockConfig)
	if err != nil {
		return nil, err
	}
	if mocks != nil {
		opts = append(opts, server.WithMocks(mocks))
	}
	if e := c.events.destinations(); e != nil {
		opts = append(opts, server.WithEvents(*e))
	}
	t, err := c.traces.tracing()
	if err != nil {
		return nil, err
	}
	if t != nil {
		opts = append(opts, server.WithTracing(*t))
	}
	if len(c.templates) > 0 || len(c.templateParams) > 0 {
		opts = append(opts, server.WithDeployAtStart(func(ctx context.Context, d *deploy.Deployer) error {
			return deployTemplates(ctx, d, c.templates, c.templateParams, c.templateAdopt, func(r *deploy.Report) { r.WriteText(c.Err) })
		}))
	}
	return opts, nil
}

// usage is err, as bad usage when it is a setting the server could not
// take.
func usage(err error) error {
	var cfgErr *server.ConfigError
	if errors.As(err, &cfgErr) {
		return &UsageError{err.Error()}
	}
	return err
}

// loadMockConfig reads the mock configuration named by path, or else by
// $SFN_MOCK_CONFIG; nil when neither names one.
func loadMockConfig(path string) (*mock.Config, error) {
	if path == "" {
		path = os.Getenv(mock.EnvFile)
	}
	if path == "" {
		return nil, nil
	}
	return mock.Load(path)
}

// deployTemplates deploys serve's --template files (or cdk.outs) as the
// server starts; adopt is --adopt.
func deployTemplates(ctx context.Context, dep *deploy.Deployer, paths, params []string, adopt bool, out func(*deploy.Report)) error {
	overrides, err := parseParameterOverrides(params)
	if err != nil {
		return err
	}
	for _, path := range paths {
		units, err := deployUnits(path, "", overrides, nil)
		if err != nil {
			return fmt.Errorf("--template %s: %w", path, err)
		}
		for _, u := range units {
			text, err := boundedfile.Read(ctx, u.templatePath, maxTemplateFile)
			if err != nil {
				return fmt.Errorf("--template: %w", err)
			}
			report, err := server.Deploy(ctx, dep, &server.DeployRequest{StackName: u.stackName, Template: string(text),
				TemplatePath: u.templatePath, BaseDir: u.baseDir, Parameters: u.params, Adopt: adopt})
			if report != nil {
				out(report)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// eventFlags are the destinations of status-change events.
type eventFlags struct {
	webhooks []string
	secret   string
	bus      string
	file     string
}

func (e *eventFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&e.webhooks, "events-webhook", nil, "POST every execution status-change event (EventBridge's shape) to this URL (repeatable)")
	f.StringVar(&e.secret, "events-webhook-secret", "", "sign webhook requests with HMAC-SHA256 under this secret (default $STEPWISE_EVENTS_WEBHOOK_SECRET)")
	f.StringVar(&e.bus, "events-bus", "", "put every execution status-change event on this EventBridge event bus (name or ARN), at the endpoint configured for events")
	f.StringVar(&e.file, "events-file", "", "append every execution status-change event to this file, a JSON object a line")
}

// destinations are the events' destinations the flags name; nil when
// there is none.
func (e *eventFlags) destinations() *server.Events {
	if len(e.webhooks) == 0 && e.bus == "" && e.file == "" {
		return nil
	}
	secret := e.secret
	if secret == "" {
		secret = os.Getenv("STEPWISE_EVENTS_WEBHOOK_SECRET")
	}
	return &server.Events{Webhooks: e.webhooks, Secret: secret, Bus: e.bus, File: e.file}
}

// traceFlags turn executions' traces on.
type traceFlags struct {
	all      bool
	endpoint string
}

func (t *traceFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&t.all, "trace-all", false, "trace every execution, whatever its state machine's tracingConfiguration says (OpenTelemetry, over OTLP)")
	f.StringVar(&t.endpoint, "otel-endpoint", "", "OTLP collector's base URL the traces of executions go to, e.g. http://localhost:4318: OTLP/HTTP to its /v1/traces (default: the standard OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and _HEADERS, _COMPRESSION, _TIMEOUT, _CERTIFICATE variables; OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs a build with -tags otlpgrpc)")
}

// tracing is the server's tracing: --trace-all, or an OTLP endpoint given
// by the flag or the environment (state machines whose
// tracingConfiguration is enabled are then traced); nil when off.
func (t *traceFlags) tracing() (*server.Tracing, error) {
	if !t.all && t.endpoint == "" && !tracing.EndpointFromEnv() {
		return nil, nil
	}
	ratio, err := tracing.RatioFromEnv()
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	return &server.Tracing{All: t.all, Endpoint: t.endpoint, Ratio: ratio, Version: Version}, nil
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
