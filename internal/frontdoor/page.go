package frontdoor

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Errors of ReadPageToken, for each API to word as AWS does.
var (
	// ErrBadToken is a token that is none of ours, or one of another list.
	ErrBadToken = errors.New("not a page token of this list")
	// ErrOtherScope is a token of the same list given for another scope:
	// another resource, or other filters.
	ErrOtherScope = errors.New("a page token of another resource or filters")
)

// pageToken is what a page token holds besides the position, whose
// members sit beside these in the same object.
type pageToken struct {
	Kind  string `json:"k"`
	Scope string `json:"s,omitempty"`
}

// PageToken is the token of a list's next page: the list's kind ("ex":
// ListExecutions), its scope (what was listed: the resource and the
// filters, written as the list pleases), and pos, where the next page
// starts: a struct of the list's own, whose JSON members (none named "k"
// or "s") are written beside the kind and scope. The token is opaque to
// clients: the base64 (URL alphabet, unpadded) of that one small JSON
// object, {"k":"ex","s":"...","a":"...","t":...}, the form Step Functions'
// tokens have always had, so that a client paging across an upgrade
// pages on.
func PageToken(kind, scope string, pos any) string {
	p, err := json.Marshal(pos)
	if err != nil || len(p) < 2 || p[0] != '{' {
		panic(fmt.Sprintf("frontdoor: page position %T is not a JSON object (%v)", pos, err)) // a list's own type
	}
	b, _ := json.Marshal(pageToken{Kind: kind, Scope: scope})
	if len(p) > 2 { // members of pos after the kind and scope
		b = append(append(b[:len(b)-1], ','), p[1:]...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// ReadPageToken reads into pos (a pointer) the position of token, given
// by a client for the list kind over scope. A token that is not one of
// PageToken's, or one of another list, is ErrBadToken; one of the same
// list over another scope is ErrOtherScope.
func ReadPageToken(token, kind, scope string, pos any) error {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return ErrBadToken
	}
	var t pageToken
	if err := json.Unmarshal(b, &t); err != nil || t.Kind != kind {
		return ErrBadToken
	}
	if t.Scope != scope {
		return ErrOtherScope
	}
	if json.Unmarshal(b, pos) != nil {
		return ErrBadToken
	}
	return nil
}
