package lambda

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Interpreters of Python and Node.js handlers
//
// Every Python 3 and Node.js runtime Lambda names (python3.7 ...
// python3.14, nodejs12.x ... nodejs24.x, deprecated ones included) runs
// here on the host's interpreter: python3 and node from PATH, or the
// program --runtime RUNTIME=PATH names for that runtime. When the
// declared version is not the interpreter's, the function still runs;
// VersionNote says so, for a deploy to warn.

var (
	pythonID = regexp.MustCompile(`^python3\.(\d+)$`)
	nodeID   = regexp.MustCompile(`^nodejs(\d+)\.x$`)
)

// IsInterpreted says whether a Lambda runtime identifier is one a host
// interpreter runs: python3.N or nodejsN.x.
func IsInterpreted(lambdaRuntime string) bool {
	return pythonID.MatchString(lambdaRuntime) || nodeID.MatchString(lambdaRuntime)
}

// program is the interpreter of a handler: the one given for its
// declared runtime, else python3 or node.
func (l *Local) program(h *Handler) string {
	if p := l.interpreters[h.Declared]; p != "" {
		return p
	}
	if h.Runtime == RuntimeNode {
		return "node"
	}
	return "python3"
}

// SetInterpreters sets the interpreters of declared runtimes
// (python3.12 → /usr/bin/python3.12); it is called before the first
// invoke.
func (l *Local) SetInterpreters(interpreters map[string]string) {
	l.interpreters = interpreters
}

// VersionNote is "" when an interpreter of the runtime's version runs a
// function declared with lambdaRuntime, else what differs ("declared
// python3.12, runs on the host's python3.11"; "nodejs14.x code on Node
// 20"), or why it is not known.
func (l *Local) VersionNote(lambdaRuntime string) string {
	var program string
	if p := l.interpreters[lambdaRuntime]; p != "" {
		program = p
	} else if pythonID.MatchString(lambdaRuntime) {
		program = "python3"
	} else if nodeID.MatchString(lambdaRuntime) {
		program = "node"
	} else {
		return ""
	}
	v, err := hostVersion(program)
	if err != nil {
		return fmt.Sprintf("declared %s, runs on %s, whose version is not known: %v", lambdaRuntime, program, err)
	}
	if m := pythonID.FindStringSubmatch(lambdaRuntime); m != nil {
		if got := "python" + majorMinor(v); got != lambdaRuntime {
			return fmt.Sprintf("declared %s, runs on the host's %s (%s)", lambdaRuntime, got, program)
		}
		return ""
	}
	m := nodeID.FindStringSubmatch(lambdaRuntime)
	if major, _, _ := strings.Cut(v, "."); major != m[1] {
		return fmt.Sprintf("%s code on Node %s (%s)", lambdaRuntime, major, program)
	}
	return ""
}

// majorMinor is "3.11" of "3.11.7".
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

var versions sync.Map // program → the result of versionOf

type versionResult struct {
	v   string
	err error
}

// hostVersion is a program's version, "3.11.7" or "20.20.2", asked once.
func hostVersion(program string) (string, error) {
	if r, ok := versions.Load(program); ok {
		return r.(versionResult).v, r.(versionResult).err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, "--version").CombinedOutput()
	r := versionResult{err: err}
	if err == nil {
		// "Python 3.11.7", "v20.20.2"
		s := strings.TrimSpace(string(out))
		s = strings.TrimPrefix(strings.TrimPrefix(s, "Python "), "v")
		r.v = s
	}
	versions.Store(program, r)
	return r.v, r.err
}
