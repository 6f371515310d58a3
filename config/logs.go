package config

import (
	"fmt"
	"log/slog"
	"strings"
)

// Where executions' logs go (ExecutionLogs.To).
const (
	// ExecutionLogsAuto writes to CloudWatch Logs when an endpoint is set
	// for the logs service (--endpoint logs=URL or --aws-endpoint), and to
	// files otherwise.
	ExecutionLogsAuto = "auto"
	// ExecutionLogsFiles writes JSON-lines files under ExecutionLogs.Dir.
	ExecutionLogsFiles = "files"
	// ExecutionLogsCloudWatch writes to CloudWatch Logs: the configured
	// endpoint, or AWS's own with the usual credentials.
	ExecutionLogsCloudWatch = "cloudwatch"
	// ExecutionLogsOff writes none.
	ExecutionLogsOff = "off"
)

// ExecutionLogs says where the logs of executions go whose state machine's
// logging configuration asks for them (level ALL, ERROR or FATAL).
type ExecutionLogs struct {
	// To is ExecutionLogsAuto, ExecutionLogsFiles, ExecutionLogsCloudWatch
	// or ExecutionLogsOff.
	To string
	// Dir is the folder of the files: a folder per log group, a file per
	// stream. "" is the database's path with ".logs" added
	// ("stepwise.logs" for an in-memory database).
	Dir string
}

// ExecutionLogsDir returns the folder of execution log files.
func (s *Serve) ExecutionLogsDir() string {
	if s.ExecutionLogs.Dir != "" {
		return s.ExecutionLogs.Dir
	}
	if s.DB == ":memory:" || s.Postgres() {
		return "stepwise.logs"
	}
	return s.DB + ".logs"
}

// UsesCloudWatchLogs says whether executions' logs go to CloudWatch Logs.
func (s *Serve) UsesCloudWatchLogs() bool {
	switch s.ExecutionLogs.To {
	case ExecutionLogsCloudWatch:
		return true
	case ExecutionLogsAuto:
		return s.Integrations.AWSEndpoint != "" || s.Integrations.Endpoints["logs"] != ""
	}
	return false
}

func (e *ExecutionLogs) validate() error {
	switch e.To {
	case ExecutionLogsAuto, ExecutionLogsFiles, ExecutionLogsCloudWatch, ExecutionLogsOff:
		return nil
	}
	return fmt.Errorf("execution-logs %q: must be auto, files, cloudwatch or off", e.To)
}

// Server log formats (--log-format).
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// ServerLog is the server's own log: its format and least level.
type ServerLog struct {
	// Format is LogFormatText or LogFormatJSON.
	Format string
	// Level is debug, info, warn or error.
	Level string
}

// DefaultServerLog is text at info level.
func DefaultServerLog() ServerLog { return ServerLog{Format: LogFormatText, Level: "info"} }

// SlogLevel returns the level, or an error naming the flag.
func (l ServerLog) SlogLevel() (slog.Level, error) {
	switch strings.ToLower(l.Level) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log-level %q: must be debug, info, warn or error", l.Level)
}

// Validate names the first bad setting.
func (l ServerLog) Validate() error {
	if l.Format != LogFormatText && l.Format != LogFormatJSON {
		return fmt.Errorf("log-format %q: must be text or json", l.Format)
	}
	_, err := l.SlogLevel()
	return err
}
