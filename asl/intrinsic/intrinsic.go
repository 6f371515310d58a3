package intrinsic

import (
	"errors"
	"strings"

	"stepwise/asl/jsonpath"
)

// Call is a parsed intrinsic function call. (Placeholder implementation.)
type Call struct{ text string }

// IsCall reports whether s is written as an intrinsic function call.
func IsCall(s string) bool { return strings.HasPrefix(s, "States.") }

// Parse parses an intrinsic function call.
func Parse(expr string) (*Call, error) {
	return nil, errors.New("intrinsic functions are not implemented")
}

func (c *Call) String() string { return c.text }

// Eval evaluates the call in env.
func (c *Call) Eval(env *jsonpath.Env) (any, error) { return nil, errors.New("not implemented") }

// Paths returns the paths the call reads.
func (c *Call) Paths() []*jsonpath.Path { return nil }
