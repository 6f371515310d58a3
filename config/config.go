// Package config holds the documented settings of the stepwise commands,
// with their defaults and validation, as plain structs the engine, the
// service and the store take.
package config

import (
	"errors"
	"fmt"
	"net"
	"regexp"
)

// Defaults of Serve.
const (
	DefaultAddr          = "127.0.0.1:8083"
	DefaultDB            = "stepwise.db"
	DefaultRegion        = "us-east-1"
	DefaultAccount       = "123456789012"
	DefaultWaitTimeScale = 1.0
	DefaultPayloadLimit  = 256 * 1024
)

// Serve configures "stepwise serve".
type Serve struct {
	// Addr is the host:port the API listens on.
	Addr string
	// DB is the SQLite file holding all data; ":memory:" keeps it in
	// memory only.
	DB string
	// Region and Account appear in every ARN the server hands out.
	Region  string
	Account string
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
	// Integrations says where the calls of service integrations go.
	Integrations Integrations
}

// DefaultServe returns the settings "stepwise serve" starts from.
func DefaultServe() Serve {
	return Serve{
		Addr:          DefaultAddr,
		DB:            DefaultDB,
		Region:        DefaultRegion,
		Account:       DefaultAccount,
		WaitTimeScale: DefaultWaitTimeScale,
		PayloadLimit:  DefaultPayloadLimit,
	}
}

var (
	regionRE  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)
	accountRE = regexp.MustCompile(`^\d{12}$`)
)

// Validate names the first bad field.
func (s *Serve) Validate() error {
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		return fmt.Errorf("addr %q: %w", s.Addr, err)
	}
	if s.DB == "" {
		return errors.New("db: a file path or :memory: is required")
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
	if s.PayloadLimit <= 0 {
		return fmt.Errorf("payload-limit %d: must be positive", s.PayloadLimit)
	}
	return s.Integrations.validate()
}
