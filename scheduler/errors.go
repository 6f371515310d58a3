package scheduler

import (
	"encoding/json"
	"errors"
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

// writeError answers with err as REST-JSON services do: the code in the
// X-Amzn-ErrorType header and {"Message": ...} in the body.
func writeError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Code: "InternalServerException", Status: http.StatusInternalServerError, Message: err.Error()}
	}
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(map[string]string{"Message": e.Message})
}
