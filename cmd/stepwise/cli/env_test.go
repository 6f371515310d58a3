package cli

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// envOf reads a map as the environment.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// serveFlags parses args as serve's command line, then reads the
// variables of the flags it leaves, and returns the command's settings.
func serveFlags(t *testing.T, args []string, vars map[string]string) (*serveCommand, error) {
	t.Helper()
	c := &serveCommand{CommandBase: &CommandBase{}}
	cmd := c.command()
	require.NoError(t, cmd.ParseFlags(args))
	return c, applyEnv(cmd.Flags(), envOf(vars))
}

func TestApplyEnv(t *testing.T) {
	t.Parallel()

	t.Run("a variable sets its flag", func(t *testing.T) {
		t.Parallel()
		c, err := serveFlags(t, nil, map[string]string{
			"STEPWISE_ADDR":            "0.0.0.0:8083",
			"STEPWISE_DB":              "/data/stepwise.db",
			"STEPWISE_WAIT_TIME_SCALE": "0.5",
			"STEPWISE_INSECURE":        "1",
			"STEPWISE_RETENTION":       "30d",
			"STEPWISE_PPROF":           "127.0.0.1:6060", // a hidden flag
			"STEPWISE_CREDENTIALS":     "",               // empty: not set
		})
		require.NoError(t, err)
		require.Equal(t, "0.0.0.0:8083", c.cfg.Addr)
		require.Equal(t, "/data/stepwise.db", c.cfg.DB)
		require.Equal(t, 0.5, c.cfg.WaitTimeScale)
		require.True(t, c.cfg.Insecure)
		require.Equal(t, 30*24*time.Hour, c.cfg.Retention)
		require.Equal(t, "127.0.0.1:6060", c.pprofAddr)
		require.Empty(t, c.cfg.Credentials)
		require.Equal(t, "us-east-1", c.cfg.Region, "a flag without its variable keeps its default")
	})

	t.Run("the command line wins", func(t *testing.T) {
		t.Parallel()
		c, err := serveFlags(t, []string{"--addr", "127.0.0.1:9000", "--allowed-host", "given"}, map[string]string{
			"STEPWISE_ADDR":         "0.0.0.0:8083",
			"STEPWISE_ALLOWED_HOST": "from-env",
		})
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1:9000", c.cfg.Addr)
		require.Equal(t, []string{"given"}, c.cfg.AllowedHosts)
	})

	t.Run("a bad value is an error naming the variable", func(t *testing.T) {
		t.Parallel()
		_, err := serveFlags(t, nil, map[string]string{"STEPWISE_WAIT_TIME_SCALE": "x"})
		var usage *UsageError
		require.ErrorAs(t, err, &usage)
		require.Equal(t, `STEPWISE_WAIT_TIME_SCALE: invalid argument "x" for "--wait-time-scale" flag: strconv.ParseFloat: parsing "x": invalid syntax`, err.Error())

		_, err = serveFlags(t, nil, map[string]string{"STEPWISE_RETENTION": "soon"})
		require.EqualError(t, err, `STEPWISE_RETENTION: invalid argument "soon" for "--retention" flag: "soon": not a duration such as 90d, 2160h or 30m`)
	})

	t.Run("repeatable flags", func(t *testing.T) {
		t.Parallel()
		c, err := serveFlags(t, nil, map[string]string{
			// One value a line, each whole (a command may hold commas).
			"STEPWISE_ALLOWED_HOST": "stepwise\r\n\n  .corp.example\n",
			"STEPWISE_FUNCTION":     "a=echo 1,2\nb=cat",
			// Comma-separated lists, as on the command line.
			"STEPWISE_ENDPOINT":          "sqs=http://moto:5000,sns=http://moto:5000/sns",
			"STEPWISE_HTTP_TASK_ALLOW":   "10.0.0.0/8,stub.internal",
			"STEPWISE_FILE_TRIGGER_ROOT": "/data/in",
		})
		require.NoError(t, err)
		require.Equal(t, []string{"stepwise", ".corp.example"}, c.cfg.AllowedHosts)
		require.Equal(t, []string{"a=echo 1,2", "b=cat"}, c.functions)
		require.Equal(t, map[string]string{"sqs": "http://moto:5000", "sns": "http://moto:5000/sns"}, c.cfg.Integrations.Endpoints)
		require.Equal(t, []string{"10.0.0.0/8", "stub.internal"}, c.cfg.Integrations.HTTPTaskAllow)
		require.Equal(t, []string{"/data/in"}, c.cfg.FileTriggerRoots)
	})
}

// TestServeEnvCommandLine runs the program: a variable reaches serve's
// settings, the global --log-level's included, and the command line wins
// over it. The server never starts: --payload-limit 0 is refused, after
// the --addr the variables give is.
func TestServeEnvCommandLine(t *testing.T) {
	t.Parallel()
	run := func(env map[string]string, args ...string) (int, string) {
		var out, errOut bytes.Buffer
		args = append([]string{"serve", "--db", ":memory:", "--payload-limit", "0"}, args...)
		code := (&CLI{Out: &out, Err: &errOut, LookupEnv: envOf(env)}).Execute(args)
		return code, errOut.String()
	}

	code, stderr := run(map[string]string{"STEPWISE_ADDR": "no-port"})
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `stepwise: addr "no-port"`)

	code, stderr = run(map[string]string{"STEPWISE_LOG_LEVEL": "loud"})
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `stepwise: log-level "loud"`)

	code, stderr = run(map[string]string{"STEPWISE_LOG_LEVEL": "loud", "STEPWISE_ADDR": "no-port"}, "--log-level", "warn")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `stepwise: addr "no-port"`)

	code, stderr = run(map[string]string{"STEPWISE_EVAL_STEPS": "many"})
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `stepwise: STEPWISE_EVAL_STEPS: invalid argument "many" for "--eval-steps" flag`)
}

func TestServeHelpSaysEnv(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.Equal(t, 0, (&CLI{Out: &out, Err: &out}).Execute([]string{"serve", "--help"}))
	require.Contains(t, out.String(), "Every flag may also be given as the environment variable STEPWISE_<FLAG> (--wait-time-scale: STEPWISE_WAIT_TIME_SCALE)")
	require.Contains(t, out.String(), "comma-separated list for --calendar, --endpoint, --http-task-allow, --runtime.")
}

// sfnLocalFlags is serveFlags, then Step Functions Local's variables.
func sfnLocalFlags(t *testing.T, args []string, vars map[string]string) (*serveCommand, *sfnLocalReport, error) {
	t.Helper()
	c := &serveCommand{CommandBase: &CommandBase{}}
	cmd := c.command()
	require.NoError(t, cmd.ParseFlags(args))
	require.NoError(t, applyEnv(cmd.Flags(), envOf(vars)))
	r, err := applySFNLocal(cmd.Flags(), envOf(vars))
	return c, r, err
}

// sfnLocalEnv sets every variable of Step Functions Local.
var sfnLocalEnv = map[string]string{
	"AWS_DEFAULT_REGION":      "eu-west-3",
	"AWS_ACCOUNT_ID":          "000000000000",
	"WAIT_TIME_SCALE":         "0.25",
	"LAMBDA_ENDPOINT":         "http://lambda:3001",
	"BATCH_ENDPOINT":          "http://batch:4566",
	"DYNAMODB_ENDPOINT":       "http://dynamodb:8000",
	"ECS_ENDPOINT":            "http://ecs:4566",
	"GLUE_ENDPOINT":           "http://glue:4566",
	"SAGE_MAKER_ENDPOINT":     "http://sagemaker:4566",
	"SQS_ENDPOINT":            "http://sqs:9324",
	"SNS_ENDPOINT":            "http://sns:9911",
	"STEP_FUNCTIONS_ENDPOINT": "http://localhost:8083",
	"SFN_MOCK_CONFIG":         "/home/stepfunctionslocal/MockConfigFile.json",
}

func TestApplySFNLocal(t *testing.T) {
	t.Parallel()

	t.Run("each variable sets its flag", func(t *testing.T) {
		t.Parallel()
		c, r, err := sfnLocalFlags(t, nil, sfnLocalEnv)
		require.NoError(t, err)
		require.Equal(t, "eu-west-3", c.cfg.Region)
		require.Equal(t, "000000000000", c.cfg.Account)
		require.Equal(t, 0.25, c.cfg.WaitTimeScale)
		require.Equal(t, "/home/stepfunctionslocal/MockConfigFile.json", c.mockConfig)
		require.Equal(t, map[string]string{
			"lambda": "http://lambda:3001", "batch": "http://batch:4566", "dynamodb": "http://dynamodb:8000",
			"ecs": "http://ecs:4566", "glue": "http://glue:4566", "sagemaker": "http://sagemaker:4566",
			"sqs": "http://sqs:9324", "sns": "http://sns:9911",
		}, c.cfg.Integrations.Endpoints)
		require.Equal(t, []any{
			"applied", "AWS_ACCOUNT_ID, AWS_DEFAULT_REGION, WAIT_TIME_SCALE, LAMBDA_ENDPOINT, BATCH_ENDPOINT, DYNAMODB_ENDPOINT, " +
				"ECS_ENDPOINT, GLUE_ENDPOINT, SAGE_MAKER_ENDPOINT, SQS_ENDPOINT, SNS_ENDPOINT, SFN_MOCK_CONFIG",
			"overridden", "none",
			"ignored", "STEP_FUNCTIONS_ENDPOINT (nested executions run on this server)",
		}, r.attrs())
	})

	t.Run("flags and STEPWISE_ variables win", func(t *testing.T) {
		t.Parallel()
		vars := map[string]string{"STEPWISE_REGION": "ap-northeast-1", "STEPWISE_MOCK_CONFIG": "mine.json"}
		for k, v := range sfnLocalEnv {
			vars[k] = v
		}
		c, r, err := sfnLocalFlags(t, []string{"--account", "111111111111", "--endpoint", "sqs=http://mine:1", "--time-skip"}, vars)
		require.NoError(t, err)
		require.Equal(t, "ap-northeast-1", c.cfg.Region)
		require.Equal(t, "111111111111", c.cfg.Account)
		require.Equal(t, 1.0, c.cfg.WaitTimeScale, "--time-skip takes no WAIT_TIME_SCALE")
		require.Equal(t, "mine.json", c.mockConfig)
		require.Equal(t, "http://mine:1", c.cfg.Integrations.Endpoints["sqs"])
		require.Equal(t, "http://lambda:3001", c.cfg.Integrations.Endpoints["lambda"], "another service's endpoint is still added")
		require.Equal(t, []string{"AWS_ACCOUNT_ID", "AWS_DEFAULT_REGION", "WAIT_TIME_SCALE", "SQS_ENDPOINT", "SFN_MOCK_CONFIG"}, r.overridden)
	})

	t.Run("a bad value is an error naming the variable", func(t *testing.T) {
		t.Parallel()
		_, _, err := sfnLocalFlags(t, nil, map[string]string{"WAIT_TIME_SCALE": "fast"})
		require.EqualError(t, err, `WAIT_TIME_SCALE: invalid argument "fast" for "--wait-time-scale" flag: strconv.ParseFloat: parsing "fast": invalid syntax`)
	})
}

// TestSFNLocalEnvSwitch runs the program: Step Functions Local's
// variables are read only with --sfn-local-env (STEPWISE_SFN_LOCAL_ENV),
// and the line saying which were applied is logged. The server never
// starts (--payload-limit 0 is refused after --region).
func TestSFNLocalEnvSwitch(t *testing.T) {
	t.Parallel()
	run := func(env map[string]string) (int, string) {
		var out, errOut bytes.Buffer
		code := (&CLI{Out: &out, Err: &errOut, LookupEnv: envOf(env)}).Execute([]string{"serve", "--db", ":memory:", "--payload-limit", "0"})
		return code, errOut.String()
	}
	code, stderr := run(map[string]string{"AWS_DEFAULT_REGION": "not-a-region"})
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "stepwise: payload-limit 0: must be positive")
	require.NotContains(t, stderr, "Step Functions Local")

	code, stderr = run(map[string]string{"AWS_DEFAULT_REGION": "not-a-region", "STEPWISE_SFN_LOCAL_ENV": "1"})
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `msg="serve: Step Functions Local variables" applied=AWS_DEFAULT_REGION overridden=none ignored=none`)
	require.Contains(t, stderr, `stepwise: region "not-a-region"`)
}

// TestServeContainerWarning serves in a container without credentials,
// set by STEPWISE_CONTAINER: the start warns that the API is open to
// whoever reaches the published port.
func TestServeContainerWarning(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	stop := make(chan struct{})
	c := &serveCommand{CommandBase: &CommandBase{Logger: slog.New(slog.NewTextHandler(&errOut, nil)), Out: &out, Err: &errOut,
		LookupEnv: envOf(map[string]string{"STEPWISE_CONTAINER": "1"})}, stop: stop}
	c.ready = func(string) { close(stop) }
	cmd := c.command()
	cmd.SetArgs([]string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--metrics=false"})
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return applyEnv(cmd.Flags(), c.LookupEnv) }
	require.NoError(t, cmd.Execute())
	require.True(t, c.cfg.Container)
	require.Contains(t, errOut.String(), "level=WARN msg=\"serve: without --credentials the API is open to whoever reaches the port the container publishes: "+
		"publish it on 127.0.0.1 (-p 127.0.0.1:")
	require.Contains(t, errOut.String(), "or set STEPWISE_CREDENTIALS")
}
