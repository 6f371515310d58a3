package cli

import (
	"bytes"
	"testing"
	"time"

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
