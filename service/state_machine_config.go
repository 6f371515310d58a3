package service

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// A state machine's own configuration: its logging (where its execution
// logs go, package observe/execlog), tracing and encryption settings, with
// their shapes. The blocks are stored as the JSON of
// their normalised form (defaults filled in), so that equal
// configurations have equal text.

// Log levels and encryption types.
const (
	logLevelOff        = "OFF"
	encryptionAWSOwned = "AWS_OWNED_KEY"
	encryptionKMS      = "CUSTOMER_MANAGED_KMS_KEY"
)

// normalLogging checks a logging configuration and fills in its defaults
// (level OFF, includeExecutionData false).
func normalLogging(v *validator, in *LoggingConfiguration) *LoggingConfiguration {
	out := LoggingConfiguration{}
	if in != nil {
		out = *in
	}
	if out.Level != nil {
		v.enum("loggingConfiguration.level", *out.Level, "ALL", "ERROR", "FATAL", "OFF")
	}
	for i, d := range out.Destinations {
		if d.CloudWatchLogsLogGroup != nil && d.CloudWatchLogsLogGroup.LogGroupArn != nil {
			v.length("loggingConfiguration.destinations."+strconv.Itoa(i+1)+".member.cloudWatchLogsLogGroup.logGroupArn", *d.CloudWatchLogsLogGroup.LogGroupArn, 1, maxArnLength)
		}
	}
	if out.Level == nil {
		out.Level = ptr(logLevelOff)
	}
	if out.IncludeExecutionData == nil {
		out.IncludeExecutionData = ptr(false)
	}
	return &out
}

// logGroupArnRE matches a CloudWatch Logs log group's ARN, with or without
// the ":*" qualifier.
var logGroupArnRE = regexp.MustCompile(`^arn:[^:]+:logs:[^:]*:[^:]*:log-group:[^:]+(:\*)?$`)

// checkLogging returns the InvalidLoggingConfiguration error AWS gives a
// configuration that logs without exactly one destination, or whose
// destination is not a log group's ARN with the ":*" qualifier
// (arn:aws:logs:REGION:ACCOUNT:log-group:NAME:*). Whether the log group
// exists is not checked: executions' logs may go to files.
func checkLogging(l *LoggingConfiguration) error {
	if len(l.Destinations) > 1 || *l.Level != logLevelOff && len(l.Destinations) == 0 {
		return errLoggingDestination()
	}
	for _, d := range l.Destinations {
		if d.CloudWatchLogsLogGroup == nil || d.CloudWatchLogsLogGroup.LogGroupArn == nil || *d.CloudWatchLogsLogGroup.LogGroupArn == "" {
			return errLoggingGroupArn()
		}
		arn := *d.CloudWatchLogsLogGroup.LogGroupArn
		if !logGroupArnRE.MatchString(arn) {
			return errLoggingNotLogGroup()
		}
		if !strings.HasSuffix(arn, ":*") {
			return errLoggingQualifier()
		}
	}
	return nil
}

func normalTracing(in *TracingConfiguration) *TracingConfiguration {
	out := TracingConfiguration{}
	if in != nil {
		out = *in
	}
	if out.Enabled == nil {
		out.Enabled = ptr(false)
	}
	return &out
}

// normalEncryption checks an encryption configuration. Only AWS-owned keys
// are supported: there is no KMS here.
func normalEncryption(v *validator, in *EncryptionConfiguration) (*EncryptionConfiguration, error) {
	if in == nil {
		return &EncryptionConfiguration{Type: encryptionAWSOwned}, nil
	}
	out := *in
	if out.Type == "" {
		v.required("encryptionConfiguration.type", out.Type)
	}
	v.enum("encryptionConfiguration.type", out.Type, encryptionAWSOwned, encryptionKMS)
	if out.KmsKeyID != nil {
		v.length("encryptionConfiguration.kmsKeyId", *out.KmsKeyID, 1, 2048)
	}
	v.intRange("encryptionConfiguration.kmsDataKeyReusePeriodSeconds", out.KmsDataKeyReusePeriodSeconds, 60, 900)
	if out.Type == encryptionKMS {
		return nil, errKmsUnsupported()
	}
	return &out, nil
}

func configText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs always marshal
	}
	return string(b)
}

// readConfig decodes a stored configuration; "" (or anything unreadable)
// leaves the default.
func readConfig[T any](text string, def *T) *T {
	if text == "" {
		return def
	}
	var out T
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return def
	}
	return &out
}

func defaultLogging() *LoggingConfiguration {
	return &LoggingConfiguration{Level: ptr(logLevelOff), IncludeExecutionData: ptr(false)}
}

func defaultTracing() *TracingConfiguration { return &TracingConfiguration{Enabled: ptr(false)} }

func defaultEncryption() *EncryptionConfiguration {
	return &EncryptionConfiguration{Type: encryptionAWSOwned}
}

// LoggingConfiguration is a state machine's logging configuration.
type LoggingConfiguration struct {
	Level                *string          `json:"level,omitempty"`
	IncludeExecutionData *bool            `json:"includeExecutionData,omitempty"`
	Destinations         []LogDestination `json:"destinations,omitzero"`
}

// LogDestination is one logging destination.
type LogDestination struct {
	CloudWatchLogsLogGroup *CloudWatchLogsLogGroup `json:"cloudWatchLogsLogGroup,omitempty"`
}

// CloudWatchLogsLogGroup names a log group.
type CloudWatchLogsLogGroup struct {
	LogGroupArn *string `json:"logGroupArn,omitempty"`
}

// TracingConfiguration is a state machine's X-Ray tracing configuration.
type TracingConfiguration struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// EncryptionConfiguration is a state machine's encryption configuration.
type EncryptionConfiguration struct {
	KmsKeyID                     *string `json:"kmsKeyId,omitempty"`
	KmsDataKeyReusePeriodSeconds *int    `json:"kmsDataKeyReusePeriodSeconds,omitempty"`
	Type                         string  `json:"type"`
}
