// Package config holds the documented settings of the stepwise commands,
// with their defaults and validation, as plain structs the engine, the
// service and the store take.
package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"stepwise/asl/budget"
	"stepwise/history"
	"stepwise/internal/security/hostcheck"
	"stepwise/internal/security/quota"
)

// Defaults of Serve.
const (
	DefaultAddr = "127.0.0.1:8083"
	// DefaultAPIAddr is where the deployed APIs' routes are served, as
	// sam local start-api does.
	DefaultAPIAddr       = "127.0.0.1:3000"
	DefaultDB            = "stepwise.db"
	DefaultRegion        = "us-east-1"
	DefaultAccount       = "123456789012"
	DefaultWaitTimeScale = 1.0
	DefaultPayloadLimit  = 256 * 1024

	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 * 1024

	// DefaultRetention is how long AWS keeps an execution after it ended.
	DefaultRetention         = 90 * 24 * time.Hour
	DefaultRetentionInterval = 10 * time.Minute
)

// Serve configures "stepwise serve".
type Serve struct {
	// Addr is the host:port the API listens on.
	Addr string
	// APIAddr is the host:port the deployed stacks' APIs (API Gateway
	// routes) are served on, from their first route. They take no
	// credentials: an address other than a loopback one needs Insecure.
	APIAddr string
	// DB is where all data lives: a SQLite file (":memory:" keeps it in
	// memory only) or a postgres:// (postgresql://) URL.
	DB string
	// DBPoolMax caps the connections to a PostgreSQL database; 0 leaves
	// it to the URL (pool_max_conns) or the driver.
	DBPoolMax int
	// Lease is how long a server on a PostgreSQL database holds its
	// executions without renewing its lease: the executions of a server
	// that died are taken over by the others within about Lease plus a
	// second. 0 means the engine's default (10 s).
	Lease time.Duration
	// NodeID names this server among the servers of a database, in its
	// logs and metrics, and as the owner of its executions; empty makes
	// one up from the host name.
	NodeID string
	// Region and Account appear in every ARN the server hands out.
	Region  string
	Account string
	// Calendars are the business calendars schedules may name (the
	// stepwise:calendar tags of their group): name → file of the days off
	// (scheduler.ParseCalendar).
	Calendars map[string]string
	// FileTriggerRoots are the folders (absolute) under which the
	// file-arrival triggers may watch a local folder; none: no local
	// folder trigger is taken.
	FileTriggerRoots []string
	// WaitTimeScale is the real time a second of execution time takes:
	// Wait states, retry back-offs and timeouts take WaitTimeScale times
	// their time, and history timestamps run 1/WaitTimeScale times as
	// fast. 0 fires every timer at once, task timeouts included.
	WaitTimeScale float64
	// TimeSkip skips time as a time-skipping test server does: the clock
	// jumps to the next timer whenever every execution only waits on
	// timers; while a task waits on a worker, a callback or a service,
	// time runs at the real rate. It replaces WaitTimeScale.
	TimeSkip bool
	// PayloadLimit is the largest execution input and state output, in
	// bytes.
	PayloadLimit int
	// Prices are what AWS charges for Step Functions: the console and the
	// metrics estimate what an execution would cost there.
	Prices history.Prices
	// Eval bounds every evaluation of a definition's expressions.
	Eval EvalLimits
	// Integrations says where the calls of service integrations go.
	Integrations Integrations
	// Quotas are token buckets by API operation, and for the state
	// transitions of STANDARD executions (quota.StateTransition), read by
	// quota.Parse from --quotas and --quota. None by default: nothing is
	// throttled.
	Quotas map[string]quota.Limit
	// ExecutionLogs says where executions' logs go.
	ExecutionLogs ExecutionLogs

	// ReadHeaderTimeout is the longest a client may take to send a
	// request's header block.
	ReadHeaderTimeout time.Duration
	// ReadTimeout is the longest a client may take to send a whole
	// request, header block and body. It ends once the body is read:
	// the time a request then waits (a GetActivityTask long poll waits up
	// to a minute, StartSyncExecution until its execution ends) is not
	// bounded. A response's writing is not bounded either, for the same
	// reason.
	ReadTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request. It is longer than the AWS SDKs keep idle connections
	// (90 s for Go's), so that a client does not send on a connection the
	// server has just closed.
	IdleTimeout time.Duration
	// MaxHeaderBytes is the largest header block of a request, in bytes
	// (Go's HTTP server reads up to 4 KiB more before refusing it).
	MaxHeaderBytes int

	// Retention is how long an execution is kept after it ended (its
	// stop date, in execution time): older ones are deleted with their
	// history. 0 keeps every execution.
	Retention time.Duration
	// RetentionInterval is the time between two passes of the deletion.
	RetentionInterval time.Duration

	// Credentials is a shared-credentials file ([profile] sections of
	// aws_access_key_id and aws_secret_access_key): when set, every API
	// request must be signed (SigV4) with one of its keys, and the
	// console asks to sign in with one.
	Credentials string
	// Insecure allows serving on an address other than a loopback one
	// without Credentials.
	Insecure bool
	// Container says the server runs in a container whose network
	// namespace is the boundary: its port is reached only where it is
	// published. Without Credentials it may then listen on any address
	// (0.0.0.0), Addr and APIAddr alike, and it also answers requests to
	// host names without a dot (the service names of a compose file or
	// a CI job: stepwise, sfn). The cross-origin guard stays: a web page
	// still never reaches the API.
	Container bool
	// AllowedHosts are the names, besides localhost, IP addresses and
	// Addr's host, that a server without Credentials answers requests to
	// (their Host): a request to any other name is refused, so that a page
	// whose name re-resolves to the server (DNS rebinding) cannot use it.
	// Each is a host name, ".domain" (the domain and the names under it)
	// or "*" (any name: the check is off). With Credentials, requests are
	// signed or carry a session instead, and Host is not checked.
	AllowedHosts []string
	// TLSCert and TLSKey are PEM files of the server's certificate
	// (chain) and private key: when set, the server speaks HTTPS
	// (HTTP/1.1 and HTTP/2). Both or neither.
	TLSCert, TLSKey string
}

// DefaultServe returns the settings "stepwise serve" starts from.
func DefaultServe() Serve {
	return Serve{
		Addr:          DefaultAddr,
		APIAddr:       DefaultAPIAddr,
		DB:            DefaultDB,
		Region:        DefaultRegion,
		Account:       DefaultAccount,
		WaitTimeScale: DefaultWaitTimeScale,
		Prices:        history.DefaultPrices,
		PayloadLimit:  DefaultPayloadLimit,
		Eval:          DefaultEvalLimits(),
		ExecutionLogs: ExecutionLogs{To: ExecutionLogsAuto},

		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,

		Retention:         DefaultRetention,
		RetentionInterval: DefaultRetentionInterval,
	}
}

// EvalLimits bound one evaluation of a JSONata expression, a JSONPath
// query or an intrinsic function: an evaluation past one fails its state
// (States.QueryEvaluationError, or States.DataLimitExceeded for bytes).
// 0 means no bound.
type EvalLimits struct {
	// Steps is the most evaluation steps (nodes evaluated, path segments
	// applied, functions called).
	Steps int64
	// Bytes is the most bytes of values built.
	Bytes int64
	// Time is the longest wall-clock time.
	Time time.Duration
}

// DefaultEvalLimits returns budget's defaults.
func DefaultEvalLimits() EvalLimits {
	return EvalLimits{Steps: budget.DefaultSteps, Bytes: budget.DefaultBytes, Time: budget.DefaultTime}
}

// Budget returns the limits as budget takes them (where 0 means the
// default and -1 no bound).
func (l EvalLimits) Budget() budget.Limits {
	unbounded := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	return budget.Limits{Steps: unbounded(l.Steps), Bytes: unbounded(l.Bytes), Time: time.Duration(unbounded(int64(l.Time)))}
}

func (l EvalLimits) validate() error {
	if l.Steps < 0 {
		return fmt.Errorf("eval-steps %d: must not be negative (0: no limit)", l.Steps)
	}
	if l.Bytes < 0 {
		return fmt.Errorf("eval-bytes %d: must not be negative (0: no limit)", l.Bytes)
	}
	if l.Time < 0 || (l.Time > 0 && l.Time < time.Millisecond) {
		return fmt.Errorf("eval-time %s: must be at least 1ms (0: no limit)", l.Time)
	}
	return nil
}

// LoopbackHost reports whether a listen address's host is certainly a
// loopback one: "localhost" or a loopback IP. An empty host (every
// interface) is not; nor is any other name, whose addresses the server
// checks once it listens.
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NotLoopbackError is the refusal to serve without credentials on an
// address others can reach.
func NotLoopbackError(addr string) error {
	return fmt.Errorf("addr %s: refusing to serve on an address other than a loopback one without authentication: "+
		"anyone who can reach it could run workflows. Give --credentials FILE (an AWS shared-credentials file) "+
		"to require signed requests, or --insecure to serve without authentication anyway", addr)
}

// IsPostgresURL says whether a database setting names a PostgreSQL
// database rather than a SQLite file.
func IsPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Postgres says whether the server's data is in PostgreSQL.
func (s *Serve) Postgres() bool { return IsPostgresURL(s.DB) }

var (
	nodeIDRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	regionRE  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)
	accountRE = regexp.MustCompile(`^\d{12}$`)
)

// Validate names the first bad field.
func (s *Serve) Validate() error {
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		return fmt.Errorf("addr %q: %w", s.Addr, err)
	}
	if s.DB == "" {
		return errors.New("db: a file path, :memory: or a postgres:// URL is required")
	}
	if s.DBPoolMax < 0 {
		return fmt.Errorf("db-pool-max %d: must not be negative", s.DBPoolMax)
	}
	if s.Lease != 0 && !s.Postgres() {
		return errors.New("lease: needs a postgres:// db that servers share")
	}
	if s.Lease != 0 && (s.Lease < 500*time.Millisecond || s.Lease > time.Hour) {
		return fmt.Errorf("lease %v: must be between 500ms and 1h", s.Lease)
	}
	if s.NodeID != "" && !nodeIDRE.MatchString(s.NodeID) {
		return fmt.Errorf("node-id %q: 1 to 64 letters, digits, '.', '_' or '-'", s.NodeID)
	}
	if !regionRE.MatchString(s.Region) {
		return fmt.Errorf("region %q: not a region name such as us-east-1", s.Region)
	}
	if !accountRE.MatchString(s.Account) {
		return fmt.Errorf("account %q: must be 12 digits", s.Account)
	}
	if s.WaitTimeScale < 0 {
		return fmt.Errorf("wait-time-scale %v: must not be negative", s.WaitTimeScale)
	}
	if s.TimeSkip && s.WaitTimeScale != DefaultWaitTimeScale {
		return fmt.Errorf("time-skip: cannot be combined with wait-time-scale %v", s.WaitTimeScale)
	}
	if s.Postgres() && (s.TimeSkip || s.WaitTimeScale == 0) {
		return errors.New("time-skip and wait-time-scale 0 jump the clock, which needs the one clock of a single node: not on PostgreSQL, where servers are nodes of a cluster")
	}
	if s.PayloadLimit <= 0 {
		return fmt.Errorf("payload-limit %d: must be positive", s.PayloadLimit)
	}
	if err := s.Eval.validate(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"read-header-timeout", s.ReadHeaderTimeout},
		{"read-timeout", s.ReadTimeout},
		{"idle-timeout", s.IdleTimeout},
	} {
		if d.d <= 0 {
			return fmt.Errorf("%s %v: must be positive", d.name, d.d)
		}
	}
	if s.MaxHeaderBytes <= 0 {
		return fmt.Errorf("max-header-bytes %d: must be positive", s.MaxHeaderBytes)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return errors.New("tls-cert and tls-key: give both (the certificate and its private key) or neither")
	}
	if s.Credentials == "" && !s.Insecure && !s.Container {
		if host, _, _ := net.SplitHostPort(s.Addr); !LoopbackHost(host) {
			return NotLoopbackError(s.Addr)
		}
	}
	if s.APIAddr != "" && !s.Insecure && !s.Container {
		if host, _, err := net.SplitHostPort(s.APIAddr); err != nil {
			return fmt.Errorf("api-addr %s: %w", s.APIAddr, err)
		} else if !LoopbackHost(host) {
			return fmt.Errorf("api-addr %s: refusing to serve the APIs on an address other than a loopback one: "+
				"their routes take no credentials; give a loopback address (127.0.0.1:3000), or --insecure to serve them anyway", s.APIAddr)
		}
	}
	for _, name := range s.AllowedHosts {
		if _, err := hostcheck.ParseName(name); err != nil {
			return fmt.Errorf("allowed-host %w", err)
		}
	}
	for _, op := range slices.Sorted(maps.Keys(s.Quotas)) {
		if l := s.Quotas[op]; l.Bucket < 1 || !(l.Refill > 0) {
			return fmt.Errorf("quota %s=%d/%g: the bucket must be at least 1 and the refill positive", op, l.Bucket, l.Refill)
		}
	}
	if err := s.ExecutionLogs.validate(); err != nil {
		return err
	}
	if s.Retention < 0 {
		return fmt.Errorf("retention %s: must not be negative (0: keep every execution)", FormatDays(s.Retention))
	}
	if s.RetentionInterval <= 0 {
		return fmt.Errorf("retention-interval %s: must be positive", FormatDays(s.RetentionInterval))
	}
	return s.Integrations.validate()
}

// ParseDays reads a duration written as Go writes one (2160h, 90m, 1.5s)
// or as a whole number of days (90d).
func ParseDays(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n > math.MaxInt64/int64(24*time.Hour) || n < math.MinInt64/int64(24*time.Hour) {
			return 0, fmt.Errorf("%q: not a number of days such as 90d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: not a duration such as 90d, 2160h or 30m", s)
	}
	return d, nil
}

// FormatDays writes d as ParseDays reads it: whole days as 90d, other
// durations as Go writes them.
func FormatDays(d time.Duration) string {
	const day = 24 * time.Hour
	if d != 0 && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}
