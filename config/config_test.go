package config

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/quota"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := DefaultServe()
	require.NoError(t, ok.Validate())
	ok.TimeSkip = true
	require.NoError(t, ok.Validate())
	ok.Integrations = Integrations{AWSEndpoint: "http://127.0.0.1:5000", Endpoints: map[string]string{"sqs": "https://sqs.example"}}
	require.NoError(t, ok.Validate())
	ok.Integrations.HTTPTaskAllow = []string{"localhost:9000,10.0.0.0/8", "::1"}
	ok.Integrations.Runtimes = map[string]string{"python3.12": "/bin/sh", "nodejs14.x": "/bin/sh"}
	require.NoError(t, ok.Validate())
	ok.Integrations.BuildCache = t.TempDir()
	require.NoError(t, ok.Validate())
	ok.Integrations.BuildCache = filepath.Join(t.TempDir(), "not", "yet")
	require.NoError(t, ok.Validate())
	ok.Quotas = quota.AWS()
	require.NoError(t, ok.Validate())
	ok.AllowedHosts = []string{"stepwise.internal", ".corp.example", "*"}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		change func(*Serve)
		msg    string
	}{
		{func(s *Serve) { s.Addr = "nowhere" }, `addr "nowhere": address nowhere: missing port in address`},
		{func(s *Serve) { s.DB = "" }, "db: a file path, :memory: or a postgres:// URL is required"},
		{func(s *Serve) { s.DBPoolMax = -1 }, "db-pool-max -1: must not be negative"},
		{func(s *Serve) { s.NodeID = "a b" }, `node-id "a b": 1 to 64 letters, digits, '.', '_' or '-'`},
		{func(s *Serve) { s.Region = "mars" }, `region "mars": not a region name such as us-east-1`},
		{func(s *Serve) { s.Account = "12" }, `account "12": must be 12 digits`},
		{func(s *Serve) { s.WaitTimeScale = -1 }, "wait-time-scale -1: must not be negative"},
		{func(s *Serve) { s.TimeSkip, s.WaitTimeScale = true, 0 }, "time-skip: cannot be combined with wait-time-scale 0"},
		{func(s *Serve) { s.DB, s.TimeSkip = "postgres://db/stepwise", true },
			"time-skip and wait-time-scale 0 jump the clock, which needs the one clock of a single node: not on PostgreSQL, where servers are nodes of a cluster"},
		{func(s *Serve) { s.DB, s.WaitTimeScale = "postgres://db/stepwise", 0 },
			"time-skip and wait-time-scale 0 jump the clock, which needs the one clock of a single node: not on PostgreSQL, where servers are nodes of a cluster"},
		{func(s *Serve) { s.PayloadLimit = 0 }, "payload-limit 0: must be positive"},
		{func(s *Serve) { s.ReadHeaderTimeout = 0 }, "read-header-timeout 0s: must be positive"},
		{func(s *Serve) { s.ReadTimeout = -time.Second }, "read-timeout -1s: must be positive"},
		{func(s *Serve) { s.IdleTimeout = 0 }, "idle-timeout 0s: must be positive"},
		{func(s *Serve) { s.MaxHeaderBytes = 0 }, "max-header-bytes 0: must be positive"},
		{func(s *Serve) { s.Retention = -24 * time.Hour }, "retention -1d: must not be negative (0: keep every execution)"},
		{func(s *Serve) { s.RetentionInterval = 0 }, "retention-interval 0s: must be positive"},
		{func(s *Serve) { s.Integrations.AWSEndpoint = "localhost:4566" }, `aws-endpoint "localhost:4566": must be an http:// or https:// URL`},
		{func(s *Serve) { s.Integrations.Endpoints = map[string]string{"sqs": "ftp://x"} }, "endpoint sqs=ftp://x: must be an http:// or https:// URL"},
		{func(s *Serve) { s.Integrations.Endpoints = map[string]string{"SQS!": "http://x"} }, "endpoint SQS!=http://x: not a service name such as sqs"},
		{func(s *Serve) { s.Integrations.HTTPTaskAllow = []string{"localhost", "http://127.0.0.1:8080"} },
			`http-task-allow: "http://127.0.0.1:8080" is a URL: give its host, such as localhost or localhost:8080`},
		{func(s *Serve) { s.Integrations.Functions = map[string]string{"a/b": "cat"} }, "function a/b: not a Lambda function name (letters, digits, '-' and '_', at most 64)"},
		{func(s *Serve) { s.Integrations.Functions = map[string]string{"f": " "} }, "function f: no command"},
		{func(s *Serve) { s.Integrations.Runtimes = map[string]string{"python3.12": "/no/such/python"} },
			"runtime python3.12=/no/such/python: stat /no/such/python: no such file or directory"},
		{func(s *Serve) { s.Integrations.Runtimes = map[string]string{"python3.12": "/etc/passwd"} }, "runtime python3.12=/etc/passwd: not an executable file"},
		{func(s *Serve) { s.Integrations.Runtimes = map[string]string{"python3.12": "/usr/bin"} }, "runtime python3.12=/usr/bin: not an executable file"},
		{func(s *Serve) { s.Integrations.Runtimes = map[string]string{"java21": "/bin/sh"} },
			"runtime java21=/bin/sh: the runtime is python3.N or nodejsN.x (e.g. python3.12, nodejs20.x)"},
		{func(s *Serve) { s.Integrations.BuildCache = "/etc/passwd" }, "build-cache /etc/passwd: not a folder"},
		{func(s *Serve) { s.Quotas = map[string]quota.Limit{"StartExecution": {Bucket: 0, Refill: 1}} },
			"quota StartExecution=0/1: the bucket must be at least 1 and the refill positive"},
		{func(s *Serve) { s.ExecutionLogs.To = "syslog" }, `execution-logs "syslog": must be auto, files, cloudwatch or off`},
		{func(s *Serve) { s.AllowedHosts = []string{"ok.example", "stepwise.internal:8083"} },
			`allowed-host "stepwise.internal:8083": not a host name such as stepwise.internal (without a port), .example.com for a domain and the names under it, or * for any`},
		{func(s *Serve) { s.TLSCert = "cert.pem" }, "tls-cert and tls-key: give both (the certificate and its private key) or neither"},
		{func(s *Serve) { s.TLSKey = "key.pem" }, "tls-cert and tls-key: give both (the certificate and its private key) or neither"},
		{func(s *Serve) { s.Addr = "0.0.0.0:8083" }, "addr 0.0.0.0:8083: refusing to serve on an address other than a loopback one without authentication: " +
			"anyone who can reach it could run workflows. Give --credentials FILE (an AWS shared-credentials file) to require signed requests, " +
			"or --insecure to serve without authentication anyway"},
	} {
		s := DefaultServe()
		tc.change(&s)
		require.EqualError(t, s.Validate(), tc.msg)
	}
}

// Serving on an address others can reach takes credentials, --insecure
// or --container.
func TestValidateListenAddress(t *testing.T) {
	t.Parallel()
	for addr, loopback := range map[string]bool{
		"127.0.0.1:8083": true, "127.0.0.5:0": true, "[::1]:8083": true, "localhost:8083": true,
		":8083": false, "0.0.0.0:8083": false, "[::]:8083": false, "192.168.1.20:8083": false, "stepwise.example.com:443": false,
	} {
		s := DefaultServe()
		s.Addr = addr
		err := s.Validate()
		if loopback {
			require.NoError(t, err, addr)
			continue
		}
		require.ErrorContains(t, err, "refusing to serve on an address other than a loopback one without authentication", addr)
		s.Credentials = "credentials"
		require.NoError(t, s.Validate(), addr)
		s.Credentials, s.Insecure = "", true
		require.NoError(t, s.Validate(), addr)
		s.Insecure, s.Container = false, true
		require.NoError(t, s.Validate(), addr)
	}
}

func TestParseFunctions(t *testing.T) {
	t.Parallel()
	fns, err := ParseFunctions([]string{"resize=python3 resize.py --width=100", "echo=cat"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"resize": "python3 resize.py --width=100", "echo": "cat"}, fns)
	_, err = ParseFunctions([]string{"nocommand"})
	require.EqualError(t, err, `function "nocommand": give it as NAME=COMMAND`)
	_, err = ParseFunctions([]string{"a=x", "a=y"})
	require.EqualError(t, err, "function a: given twice")
}

func TestExecutionLogs(t *testing.T) {
	t.Parallel()
	s := DefaultServe()
	require.Equal(t, "stepwise.db.logs", s.ExecutionLogsDir())
	require.False(t, s.UsesCloudWatchLogs())
	s.DB = ":memory:"
	require.Equal(t, "stepwise.logs", s.ExecutionLogsDir())
	s.ExecutionLogs.Dir = "/var/log/stepwise"
	require.Equal(t, "/var/log/stepwise", s.ExecutionLogsDir())
	s.Integrations.Endpoints = map[string]string{"logs": "http://127.0.0.1:5000"}
	require.True(t, s.UsesCloudWatchLogs())
	s.ExecutionLogs.To = ExecutionLogsFiles
	require.False(t, s.UsesCloudWatchLogs())
	s.Integrations = Integrations{AWSEndpoint: "http://127.0.0.1:5000"}
	s.ExecutionLogs.To = ExecutionLogsAuto
	require.True(t, s.UsesCloudWatchLogs())
	s.Integrations = Integrations{}
	s.ExecutionLogs.To = ExecutionLogsCloudWatch
	require.True(t, s.UsesCloudWatchLogs())
}

func TestServerLog(t *testing.T) {
	t.Parallel()
	require.NoError(t, DefaultServerLog().Validate())
	require.NoError(t, ServerLog{Format: "json", Level: "DEBUG"}.Validate())
	require.EqualError(t, ServerLog{Format: "xml", Level: "info"}.Validate(), `log-format "xml": must be text or json`)
	require.EqualError(t, ServerLog{Format: "text", Level: "loud"}.Validate(), `log-level "loud": must be debug, info, warn or error`)
}

func TestParseDays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Duration
		back string
	}{
		{"90d", 90 * 24 * time.Hour, "90d"},
		{"2160h", 90 * 24 * time.Hour, "90d"},
		{"1d", 24 * time.Hour, "1d"},
		{"0", 0, "0s"},
		{"0d", 0, "0s"},
		{"2s", 2 * time.Second, "2s"},
		{"36h", 36 * time.Hour, "36h0m0s"},
		{"200ms", 200 * time.Millisecond, "200ms"},
	} {
		d, err := ParseDays(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, d, tc.in)
		require.Equal(t, tc.back, FormatDays(d), tc.in)
	}
	for _, tc := range []struct{ in, msg string }{
		{"", `"": not a duration such as 90d, 2160h or 30m`},
		{"ninety", `"ninety": not a duration such as 90d, 2160h or 30m`},
		{"1.5d", `"1.5d": not a number of days such as 90d`},
		{"d", `"d": not a number of days such as 90d`},
		{"999999999d", `"999999999d": not a number of days such as 90d`},
	} {
		_, err := ParseDays(tc.in)
		require.EqualError(t, err, tc.msg)
	}
}

func TestValidateAPIAddress(t *testing.T) {
	t.Parallel()
	for addr, loopback := range map[string]bool{
		"127.0.0.1:3000": true, "localhost:3000": true, "[::1]:0": true,
		":3000": false, "0.0.0.0:3000": false, "192.168.1.20:3000": false,
	} {
		s := DefaultServe()
		s.APIAddr = addr
		err := s.Validate()
		if loopback {
			require.NoError(t, err, addr)
			continue
		}
		require.ErrorContains(t, err, "api-addr "+addr+": refusing to serve the APIs on an address other than a loopback one", addr)
		// Credentials sign the server's own API, not the routes.
		s.Credentials = "credentials"
		require.Error(t, s.Validate(), addr)
		s.Credentials, s.Insecure = "", true
		require.NoError(t, s.Validate(), addr)
		// In a container, the published port is the boundary.
		s.Insecure, s.Container = false, true
		require.NoError(t, s.Validate(), addr)
	}
	s := DefaultServe()
	require.Equal(t, "127.0.0.1:3000", s.APIAddr)
	s.APIAddr = "3000"
	require.ErrorContains(t, s.Validate(), "api-addr 3000:")
}
