package scheduler

import (
	"fmt"
	"net/http"
)

// Error is an error of the Scheduler API: its code (the exception's
// name), HTTP status and message.
type Error struct {
	Code    string
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func validationError(format string, args ...any) error {
	return &Error{Code: "ValidationException", Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

func conflictError(format string, args ...any) error {
	return &Error{Code: "ConflictException", Status: http.StatusConflict, Message: fmt.Sprintf(format, args...)}
}

func notFoundError(format string, args ...any) error {
	return &Error{Code: "ResourceNotFoundException", Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}
