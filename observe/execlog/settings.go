package execlog

import (
	"encoding/json"
	"fmt"
	"strings"

	"stepwise/history"
)

// Level is a logging configuration's level.
type Level uint8

// The levels, from logging nothing to logging every event.
const (
	LevelOff Level = iota
	LevelFatal
	LevelError
	LevelAll
)

// ParseLevel reads a level as the API names it; anything else is OFF.
func ParseLevel(s string) Level {
	switch s {
	case "ALL":
		return LevelAll
	case "ERROR":
		return LevelError
	case "FATAL":
		return LevelFatal
	}
	return LevelOff
}

func (l Level) String() string {
	return [...]string{"OFF", "FATAL", "ERROR", "ALL"}[l]
}

// fatalEvents are the events FATAL logs: the execution's own failures.
var fatalEvents = map[history.EventType]bool{
	history.EventExecutionAborted:  true,
	history.EventExecutionFailed:   true,
	history.EventExecutionTimedOut: true,
}

// errorEvents are the events ERROR logs besides the fatal ones: AWS's
// table of log levels (developer guide, "Log levels"), then the failures
// of activities and Map Runs and EvaluationFailed, which that table
// predates.
var errorEvents = map[history.EventType]bool{
	// AWS's table.
	"FailStateEntered":                  true,
	history.EventLambdaFunctionFailed:   true,
	"LambdaFunctionScheduleFailed":      true,
	"LambdaFunctionStartFailed":         true,
	history.EventLambdaFunctionTimedOut: true,
	history.EventMapIterationAborted:    true,
	history.EventMapIterationFailed:     true,
	history.EventMapStateAborted:        true,
	history.EventMapStateFailed:         true,
	history.EventParallelStateAborted:   true,
	history.EventParallelStateFailed:    true,
	history.EventTaskFailed:             true,
	history.EventTaskStartFailed:        true,
	history.EventTaskStateAborted:       true,
	history.EventTaskSubmitFailed:       true,
	history.EventTaskTimedOut:           true,
	history.EventWaitStateAborted:       true,
	history.EventExecutionAborted:       true,
	history.EventExecutionFailed:        true,
	history.EventExecutionTimedOut:      true,
	// Failures the table does not list.
	history.EventActivityFailed:   true,
	"ActivityScheduleFailed":      true,
	history.EventActivityTimedOut: true,
	history.EventMapRunAborted:    true,
	history.EventMapRunFailed:     true,
	history.EventEvaluationFailed: true,
}

// Logs says whether the level logs events of type t.
func (l Level) Logs(t history.EventType) bool {
	switch l {
	case LevelAll:
		return true
	case LevelError:
		return errorEvents[t]
	case LevelFatal:
		return fatalEvents[t]
	}
	return false
}

// Settings is what a state machine's logging configuration says, read for
// the Writer. A nil *Settings logs nothing.
type Settings struct {
	Level                Level
	IncludeExecutionData bool
	// LogGroupArn is the destination as configured
	// (arn:aws:logs:REGION:ACCOUNT:log-group:NAME:*); LogGroup is its NAME
	// and Region its REGION.
	LogGroupArn string
	LogGroup    string
	Region      string
	// StateMachineName names the log streams.
	StateMachineName string
}

// loggingConfiguration is the stored JSON of a logging configuration (the
// API's shape).
type loggingConfiguration struct {
	Level                string `json:"level"`
	IncludeExecutionData bool   `json:"includeExecutionData"`
	Destinations         []struct {
		CloudWatchLogsLogGroup *struct {
			LogGroupArn string `json:"logGroupArn"`
		} `json:"cloudWatchLogsLogGroup"`
	} `json:"destinations"`
}

// ParseSettings reads a logging configuration as the store keeps it (the
// API's JSON; "" is OFF) for a state machine named name. It returns nil
// for a configuration that logs nothing: level OFF, or no log group.
func ParseSettings(text, name string) (*Settings, error) {
	if text == "" {
		return nil, nil
	}
	var c loggingConfiguration
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("logging configuration: %w", err)
	}
	level := ParseLevel(c.Level)
	if level == LevelOff || len(c.Destinations) == 0 || c.Destinations[0].CloudWatchLogsLogGroup == nil {
		return nil, nil
	}
	arn := c.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn
	group, region, ok := ParseLogGroupArn(arn)
	if !ok {
		return nil, fmt.Errorf("logging configuration: %q is not a log group ARN", arn)
	}
	return &Settings{
		Level: level, IncludeExecutionData: c.IncludeExecutionData,
		LogGroupArn: arn, LogGroup: group, Region: region, StateMachineName: name,
	}, nil
}

// ParseLogGroupArn returns the name and region of a log group's ARN,
// arn:PARTITION:logs:REGION:ACCOUNT:log-group:NAME with or without a
// trailing ":*".
func ParseLogGroupArn(arn string) (name, region string, ok bool) {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "logs" || parts[5] != "log-group" {
		return "", "", false
	}
	name = strings.TrimSuffix(parts[6], ":*")
	if name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return name, parts[3], true
}
