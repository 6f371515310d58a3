package service

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// Pagination tokens are opaque to clients: the base64 of a small JSON
// cursor. A cursor names the list it belongs to (Kind and Scope), so a
// token of one list is refused by another.
type cursor struct {
	Kind  string `json:"k"`
	Scope string `json:"s,omitempty"` // the state machine or execution listed
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

func encodeToken(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken reads a token given by a client for a list of the given kind
// and scope. A token that is not one of ours is InvalidToken.
func decodeToken(token *string, kind, scope string) (*cursor, error) {
	if token == nil {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*token)
	if err != nil {
		return nil, errInvalidToken("Invalid token")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Kind != kind {
		return nil, errInvalidToken("Invalid token")
	}
	if c.Scope != scope {
		return nil, errInvalidToken("Invalid token: it belongs to another resource")
	}
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
