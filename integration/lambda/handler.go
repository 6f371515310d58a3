package lambda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Runtimes of handler functions: Python and Node.js handlers run through
// the runtime shim (shim.go); a provided runtime's bootstrap talks to our
// Lambda Runtime API (runtimeapi.go).
const (
	RuntimePython   = "python"
	RuntimeNode     = "node"
	RuntimeProvided = "provided"
)

// Default settings of a handler function: the memory Lambda's own
// default; the timeout Lambda's maximum, 15 minutes, so that a night's
// job given by --function is not cut at Lambda's default of 3 s (a
// template's function has its own Timeout, 3 s unless it says; a Task's
// TimeoutSeconds still bounds the task).
const (
	DefaultTimeout  = 15 * time.Minute
	DefaultMemoryMB = 128
	// InitTimeout bounds the handler's import, as Lambda's init phase.
	InitTimeout = 10 * time.Second
)

// Handler is a function run by a runtime: the shim's (Python, Node.js)
// or the function's own bootstrap (provided).
type Handler struct {
	// Runtime is RuntimePython, RuntimeNode or RuntimeProvided (Lambda's
	// names are taken too: python3.12, nodejs20.x, provided.al2023, ...;
	// see RuntimeFor).
	Runtime string
	// Declared is the Lambda runtime identifier Runtime was given as
	// (python3.12), "" for a short name; it chooses the interpreter
	// (see interp.go) and is AWS_EXECUTION_ENV's.
	Declared string
	// Dir is the folder of the code, or a .zip file of it (extracted
	// once, see zip.go). Name is the handler: module.function (Python),
	// file.function (Node.js), for a provided runtime anything (its
	// bootstrap reads it from _HANDLER).
	Dir, Name string
	// Timeout bounds an invoke (0: DefaultTimeout); MemoryMB is what the
	// context reports (0: DefaultMemoryMB).
	Timeout  time.Duration
	MemoryMB int
	// Env is added to the process's environment.
	Env map[string]string
	// Layers are the function's layers, in order: folders or .zip files
	// laid out as Lambda's /opt (see build.go).
	Layers []string
}

// RuntimeFor is the runtime that runs a Lambda runtime identifier
// (python3.12 → python, nodejs20.x → node, provided.al2023 → provided);
// ok is false for one Stepwise does not run locally (java21, dotnet8,
// ruby3.3, ...). The short names themselves are taken as they are.
func RuntimeFor(lambdaRuntime string) (runtime string, ok bool) {
	switch {
	case lambdaRuntime == RuntimePython || pythonID.MatchString(lambdaRuntime):
		return RuntimePython, true
	case lambdaRuntime == RuntimeNode || nodeID.MatchString(lambdaRuntime):
		return RuntimeNode, true
	case lambdaRuntime == RuntimeProvided || strings.HasPrefix(lambdaRuntime, "provided."):
		return RuntimeProvided, true
	}
	return "", false
}

// ParseHandler reads the RUNTIME:DIR:HANDLER[@TIMEOUT] form of a
// --function value (RUNTIME python, node or provided, or a Lambda
// runtime identifier of them: python3.12, nodejs20.x, provided.al2023,
// whose --runtime interpreter runs it; DIR absolute or
// relative to the working directory; TIMEOUT a duration such as 900s or
// 2h, DefaultTimeout without it); ok is false when spec is not of that
// form (it is then a command line).
func ParseHandler(spec string) (h *Handler, ok bool, err error) {
	runtime, rest, found := strings.Cut(spec, ":")
	short, known := RuntimeFor(runtime)
	if !found || !known {
		return nil, false, nil
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return nil, true, fmt.Errorf("%q: give a handler as %s:DIR:%s[@TIMEOUT]", spec, runtime, handlerForm(short))
	}
	h = &Handler{Runtime: runtime, Dir: rest[:i], Name: rest[i+1:]}
	if name, timeout, found := cutLast(h.Name, "@"); found {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return nil, true, fmt.Errorf("%q: timeout %q: a positive duration such as 900s, 15m or 2h", spec, timeout)
		}
		h.Name, h.Timeout = name, d
	}
	if h.Dir != "" && !filepath.IsAbs(h.Dir) {
		abs, err := filepath.Abs(h.Dir)
		if err != nil {
			return nil, true, fmt.Errorf("%q: the handler's folder: %w", spec, err)
		}
		h.Dir = abs
	}
	if err := h.check(); err != nil {
		return nil, true, fmt.Errorf("%q: %w", spec, err)
	}
	return h, true, nil
}

func handlerForm(runtime string) string {
	switch runtime {
	case RuntimeNode:
		return "file.function"
	case RuntimeProvided:
		return "HANDLER"
	}
	return "module.function"
}

// check names what is wrong with h, and sets its runtime's short name.
func (h *Handler) check() error {
	runtime, ok := RuntimeFor(h.Runtime)
	if !ok {
		return fmt.Errorf("runtime %q: the runtimes are %s, %s and %s", h.Runtime, RuntimePython, RuntimeNode, RuntimeProvided)
	}
	if h.Runtime != runtime {
		h.Declared = h.Runtime
	}
	h.Runtime = runtime
	if runtime != RuntimeProvided {
		mod, fn, _ := cutLast(h.Name, ".")
		if mod == "" || fn == "" {
			return fmt.Errorf("handler %q: give it as %s", h.Name, handlerForm(h.Runtime))
		}
	}
	if h.Dir == "" {
		return fmt.Errorf("no folder for handler %s", h.Name)
	}
	st, err := os.Stat(h.Dir)
	if err != nil {
		return fmt.Errorf("the handler's folder: %w", err)
	}
	if !st.IsDir() && !isZip(h.Dir) {
		return fmt.Errorf("the handler's folder %s is not a folder, nor a .zip file", h.Dir)
	}
	if h.Timeout < 0 || h.MemoryMB < 0 {
		return errors.New("a handler's timeout and memory are not negative")
	}
	return nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
