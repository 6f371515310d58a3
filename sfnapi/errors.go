package sfnapi

import "fmt"

// Error is an error an API operation returns to its caller: an AWS error
// code (the "__type" on the wire, e.g. "StateMachineDoesNotExist") and a
// message. The transport picks the HTTP status from the code.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// NewError returns an Error with a formatted message.
func NewError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// API error codes.
const (
	CodeValidation                = "ValidationException"
	CodeInvalidArn                = "InvalidArn"
	CodeInvalidDefinition         = "InvalidDefinition"
	CodeInvalidName               = "InvalidName"
	CodeInvalidExecutionInput     = "InvalidExecutionInput"
	CodeInvalidOutput             = "InvalidOutput"
	CodeInvalidToken              = "InvalidToken"
	CodeInvalidLoggingConfig      = "InvalidLoggingConfiguration"
	CodeInvalidTracingConfig      = "InvalidTracingConfiguration"
	CodeStateMachineDoesNotExist  = "StateMachineDoesNotExist"
	CodeStateMachineAlreadyExists = "StateMachineAlreadyExists"
	CodeStateMachineDeleting      = "StateMachineDeleting"
	CodeStateMachineTypeNotSupp   = "StateMachineTypeNotSupported"
	CodeExecutionDoesNotExist     = "ExecutionDoesNotExist"
	CodeExecutionAlreadyExists    = "ExecutionAlreadyExists"
	CodeExecutionNotRedrivable    = "ExecutionNotRedrivable"
	CodeExecutionLimitExceeded    = "ExecutionLimitExceeded"
	CodeResourceNotFound          = "ResourceNotFound"
	CodeTooManyTags               = "TooManyTags"
	CodeConflict                  = "ConflictException"
	CodeActivityDoesNotExist      = "ActivityDoesNotExist"
	CodeTaskDoesNotExist          = "TaskDoesNotExist"
	CodeTaskTimedOut              = "TaskTimedOut"
	CodeUnknownOperation          = "UnknownOperationException"
	CodeSerialization             = "SerializationException"
	CodeInternalFailure           = "InternalFailure"
	CodeServiceUnavailable        = "ServiceUnavailable"
	CodeThrottling                = "ThrottlingException"
	CodeAccessDenied              = "AccessDeniedException"
	CodeMissingAction             = "MissingAction"
	CodeInvalidSignature          = "InvalidSignatureException"
	CodeIncompleteSignature       = "IncompleteSignatureException"
	CodeUnrecognizedClient        = "UnrecognizedClientException"
	CodeMissingAuthToken          = "MissingAuthenticationTokenException"

	CodeMissingRequiredParameter  = "MissingRequiredParameter"
	CodeStateMachineLimitExceeded = "StateMachineLimitExceeded"
	CodeInvalidEncryptionConfig   = "InvalidEncryptionConfiguration"
	CodeServiceQuotaExceeded      = "ServiceQuotaExceededException"
	CodeUnsupportedOperation      = "UnsupportedOperation"
	CodeRequestEntityTooLarge     = "RequestEntityTooLargeException"

	CodeRequestHeaderFieldsTooLarge = "RequestHeaderFieldsTooLargeException"
)
