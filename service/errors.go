package service

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"stepwise/internal/startrule"
	"stepwise/internal/validation"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Every error an operation returns is a *sfnapi.Error made by one
// of the constructors below, so each message has one place. Messages are
// AWS's where AWS's wording is known (recorded responses); the others say
// "(wording ours)".

func apiErr(code, format string, args ...any) *sfnapi.Error {
	return sfnapi.NewError(code, format, args...)
}

// The refusals a start shares with a states:startExecution Task's
// child are internal/startrule's: their messages are written there once.

// errInvalidArnPrefix: the ARN does not start with "arn:" (AWS).
func errInvalidArnPrefix(arn string) error { return startrule.InvalidArnPrefix(arn) }

// errInvalidArnResourceType: an ARN of another resource type (AWS).
func errInvalidArnResourceType(resourceType string) error {
	return startrule.InvalidArnResourceType(resourceType)
}

// errInvalidArn: any other malformed ARN (wording ours, in AWS's frame).
func errInvalidArn(arn string) error { return startrule.InvalidArn(arn) }

// errStateMachineDoesNotExist (AWS).
func errStateMachineDoesNotExist(arn string) error { return startrule.StateMachineDoesNotExist(arn) }

// errStateMachineAlreadyExists (AWS).
func errStateMachineAlreadyExists(arn string) error {
	return apiErr(sfnapi.CodeStateMachineAlreadyExists, "State Machine Already Exists: '%s'", arn)
}

// errStateMachineDeleting (wording ours).
func errStateMachineDeleting(arn string) error { return startrule.StateMachineDeleting(arn) }

// errExecutionDoesNotExist (AWS).
func errExecutionDoesNotExist(arn string) error {
	return apiErr(sfnapi.CodeExecutionDoesNotExist, "Execution Does Not Exist: '%s'", arn)
}

// errExecutionAlreadyExists (AWS).
func errExecutionAlreadyExists(arn string) error { return startrule.ExecutionAlreadyExists(arn) }

// errExecutionNotRedrivable carries the reason DescribeExecution reports as
// redriveStatusReason (wording of the reasons: AWS for RUNNING/SUCCEEDED).
func errExecutionNotRedrivable(arn, reason string) error {
	return apiErr(sfnapi.CodeExecutionNotRedrivable, "Execution '%s' cannot be redriven: %s", arn, reason)
}

// errInvalidName (AWS).
func errInvalidName(name string) error { return startrule.InvalidName(name) }

// errInvalidToken (AWS's frame; the reason is ours).
func errInvalidToken(reason string) error {
	return apiErr(sfnapi.CodeInvalidToken, "Invalid Token: '%s'", reason)
}

// errResourceNotFound (AWS).
func errResourceNotFound(arn string) error {
	return apiErr(sfnapi.CodeResourceNotFound, "Resource not found: '%s'", arn)
}

// errTooManyTags (wording ours).
func errTooManyTags(arn string, limit int) error {
	return apiErr(sfnapi.CodeTooManyTags, "Too many tags: resource '%s' can have at most %d tags", arn, limit)
}

// errTypeNotSupported (AWS).
func errTypeNotSupported() error { return startrule.TypeNotSupported() }

// errLoggingDestination (AWS).
func errLoggingDestination() error {
	return apiErr(sfnapi.CodeInvalidLoggingConfig, "Invalid Logging Configuration: Must specify exactly one Log Destination.")
}

// errLoggingGroupArn: a destination without a log group ARN (AWS's
// words, as tools that check templates against it quote them).
func errLoggingGroupArn() error {
	return apiErr(sfnapi.CodeInvalidLoggingConfig, "Invalid Logging Configuration: Must set valid CloudWatch Log Group ARN.")
}

// errLoggingNotLogGroup: a destination ARN that is not a log group's
// (AWS's words, as tools that check templates against it quote them).
func errLoggingNotLogGroup() error {
	return apiErr(sfnapi.CodeInvalidLoggingConfig, "Invalid Logging Configuration: Provided ARN is not CloudWatch Logs Log Group ARN.")
}

// errLoggingQualifier: a log group ARN without ":*" (AWS).
func errLoggingQualifier() error {
	return apiErr(sfnapi.CodeInvalidLoggingConfig, "Invalid Logging Configuration: Log Group ARN must be provided with '*' qualifier.")
}

// errVersionDescription (AWS).
func errVersionDescription() error {
	return apiErr(sfnapi.CodeValidation, "Version description can only be set when publish is true")
}

// errMissingUpdate (AWS).
func errMissingUpdate() error {
	return apiErr(sfnapi.CodeMissingRequiredParameter, "Either the definition, the role ARN, the LoggingConfiguration, or the TracingConfiguration must be specified")
}

// errKmsUnsupported: customer managed keys are not supported (wording ours).
func errKmsUnsupported() error {
	return apiErr(sfnapi.CodeInvalidEncryptionConfig, "Invalid Encryption Configuration: CUSTOMER_MANAGED_KMS_KEY is not supported by this server; use AWS_OWNED_KEY")
}

// errListExecutionsTarget (AWS, via the validation frame).
func errListExecutionsTarget() error {
	return apiErr(sfnapi.CodeValidation, "1 validation error detected: Must provide a StateMachine ARN or MapRun ARN")
}

// errUnsupportedOperation: a Step Functions operation this server does not
// implement yet (wording ours).
func errUnsupportedOperation(op string) error {
	return apiErr(sfnapi.CodeUnsupportedOperation, "Operation %s is not supported by this server yet", op)
}

// storeError turns a store failure the caller did not expect into an API
// error: an unavailable store is ServiceUnavailable (clients retry it),
// anything else is returned as it is and reported as an internal failure
// by the transport.
func storeError(op string, err error) error {
	var apiErr *sfnapi.Error
	if errors.As(err, &apiErr) {
		return err
	}
	if errors.Is(err, store.ErrUnavailable) {
		return sfnapi.NewError(sfnapi.CodeServiceUnavailable, "The store is unavailable: %v", err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// validator collects the constraint violations of a request the way AWS's
// request validation reports them:
//
//	1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000
type validator struct {
	msgs validation.Errors
}

func newValidator() *validator { return &validator{} }

func (v *validator) add(value, member, constraint string) { v.msgs.Add(value, member, constraint) }

func quoteValue(s string) string { return validation.Quote(s) }

// required reports an absent (or empty) required member.
func (v *validator) required(member, s string) bool {
	if s == "" {
		v.add("null", member, "Member must not be null")
		return false
	}
	return true
}

// length checks a string's length in characters.
func (v *validator) length(member, s string, min, max int) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min:
		v.add(quoteValue(s), member, "Member must have length greater than or equal to "+strconv.Itoa(min))
	case n > max:
		v.add(quoteValue(truncateValue(s)), member, "Member must have length less than or equal to "+strconv.Itoa(max))
	}
}

// tokenLength checks a pagination token's length (1 to max: 1024, 3096
// for ListExecutions). AWS echoes a token that is too long in full.
func (v *validator) tokenLength(member, s string, max int) {
	switch n := utf8.RuneCountInString(s); {
	case n < 1:
		v.add(quoteValue(s), member, "Member must have length greater than or equal to 1")
	case n > max:
		v.add(quoteValue(s), member, "Member must have length less than or equal to "+strconv.Itoa(max))
	}
}

// sensitiveLength checks the length of a member AWS does not echo.
func (v *validator) sensitiveLength(member, s string, min, max int) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min:
		v.add("'***'", member, "Member must have length greater than or equal to "+strconv.Itoa(min))
	case n > max:
		v.add("'***'", member, "Member must have length less than or equal to "+strconv.Itoa(max))
	}
}

// intRange checks an optional integer.
func (v *validator) intRange(member string, p *int, min, max int) {
	if p == nil {
		return
	}
	switch {
	case *p < min:
		v.add(quoteValue(strconv.Itoa(*p)), member, "Member must have value greater than or equal to "+strconv.Itoa(min))
	case *p > max:
		v.add(quoteValue(strconv.Itoa(*p)), member, "Member must have value less than or equal to "+strconv.Itoa(max))
	}
}

// enum checks an optional enumerated string ("" is absent).
func (v *validator) enum(member, s string, values ...string) {
	if s == "" {
		return
	}
	for _, x := range values {
		if s == x {
			return
		}
	}
	v.add(quoteValue(s), member, "Member must satisfy enum value set: ["+strings.Join(values, ", ")+"]")
}

// pattern records a failed pattern check.
func (v *validator) pattern(member, s, pattern string) {
	v.add(quoteValue(s), member, "Member must satisfy regular expression pattern: "+pattern)
}

// err returns the ValidationException for what was found, or nil.
func (v *validator) err() error {
	if m := v.msgs.Message(); m != "" {
		return apiErr(sfnapi.CodeValidation, "%s", m)
	}
	return nil
}

// truncateValue keeps error messages readable for huge values.
func truncateValue(s string) string {
	const max = 1024
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
