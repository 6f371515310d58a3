package service

import (
	"errors"
	"time"

	"stepwise/internal/frontdoor"
)

// Pagination tokens are the front door's (frontdoor.PageToken): opaque
// to clients, each names the list it belongs to (Kind) and what was listed
// (Scope: the resource and the filters), so a token of one list or scope
// is refused by another. cursor is where the next page starts.
type cursor struct {
	Kind  string `json:"-"`
	Scope string `json:"-"`           // the state machine or execution listed, and the filters
	After string `json:"a,omitempty"` // a name or ARN
	Time  int64  `json:"t,omitempty"` // unix milliseconds
	ID    int64  `json:"i,omitempty"`
}

// Cursor kinds.
const (
	cursorStateMachines = "sm"
	cursorExecutions    = "ex"
	cursorHistory       = "ev"
	cursorMapRuns       = "mr"
)

func encodeToken(c cursor) string { return frontdoor.PageToken(c.Kind, c.Scope, c) }

// decodeToken reads a token given by a client for a list of the given kind
// and scope. A token that is not one of ours, or is another list's or
// scope's, is InvalidToken.
func decodeToken(token *string, kind, scope string) (*cursor, error) {
	if token == nil {
		return nil, nil
	}
	var c cursor
	switch err := frontdoor.ReadPageToken(*token, kind, scope, &c); {
	case errors.Is(err, frontdoor.ErrOtherScope):
		return nil, errInvalidToken("Invalid token: it belongs to another resource")
	case err != nil:
		return nil, errInvalidToken("Invalid token")
	}
	c.Kind, c.Scope = kind, scope
	return &c, nil
}

// pageSize returns the page size a request asks for (0 or absent means
// the default).
func pageSize(maxResults *int) int {
	if maxResults == nil || *maxResults == 0 {
		return defaultPageSize
	}
	return *maxResults
}

func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
