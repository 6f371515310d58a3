package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// AWS::Lambda::Function and AWS::Serverless::Function: a local function
// (Functions), whose code is a folder or a .zip on this machine. Ref is
// its name; Fn::GetAtt gives Arn. A changed function is put again; a new
// name replaces it. A local function of that name that the stack did
// not make (another stack's) is refused as any named resource is
// (own.go). Without Functions, or with PackageType Image, the function
// is named and skipped.
type functionKind struct{}

// AWS::Lambda::Version and AWS::Lambda::Alias: named, so that a
// definition's Ref to them resolves; invoking the function's ARN with
// the version or alias as qualifier reaches the local function.
type lambdaQualifierKind struct{}

const (
	lambdaFunction = "AWS::Lambda::Function"
	samFunction    = "AWS::Serverless::Function"
	lambdaVersion  = "AWS::Lambda::Version"
	lambdaAlias    = "AWS::Lambda::Alias"
)

func init() {
	register(functionKind{}, lambdaFunction, samFunction)
	register(lambdaQualifierKind{}, lambdaVersion, lambdaAlias)
	// A skipped function gets its own warning; permissions and invoke
	// settings change nothing of how a local function runs.
	for _, t := range []string{lambdaFunction, samFunction, "AWS::Lambda::Permission", "AWS::Lambda::EventInvokeConfig"} {
		quiet[t] = true
	}
}

// Runtimes are the Lambda runtimes that run here: the Python 3 and
// Node.js ones on the host's interpreter (or --runtime's), whatever
// version they declare (a warning names the difference).
const Runtimes = "python3.x (python3.7 ... python3.14), nodejsN.x (nodejs12.x ... nodejs24.x), provided, provided.al2, provided.al2023"

var (
	nodeRuntime   = regexp.MustCompile(`^nodejs\d+\.x$`)
	pythonRuntime = regexp.MustCompile(`^python3\.\d+$`)
)

// VersionNoter is what Functions may also do: say how the interpreter
// that runs a runtime differs from the version it declares ("" when it
// does not), for a deploy to warn.
type VersionNoter interface {
	VersionNote(runtime string) string
}

// checkRuntime says whether a function of runtime rt runs here.
func checkRuntime(rt string) error {
	switch {
	case rt == "":
		return fmt.Errorf("no Runtime: a function runs here with one of %s", Runtimes)
	case pythonRuntime.MatchString(rt) || nodeRuntime.MatchString(rt):
		return nil
	case rt == "provided" || rt == "provided.al2" || rt == "provided.al2023":
		return nil
	}
	return fmt.Errorf("runtime %s does not run here; the runtimes that do: %s", rt, Runtimes)
}

// functionSpec is what a function was put with: the function, where its
// code came from and a digest of the code's bytes (a folder edited in
// place is a change).
type functionSpec struct {
	Function *Function `json:"function"`
	Source   string    `json:"source"`
	Digest   string    `json:"digest"`
	// Layers are the digests of its layers' content (a layer edited in
	// place is a change).
	Layers []string `json:"layers,omitempty"`
}

// layerDigests are the digests of the stack's layers at paths.
func (x *run) layerDigests(paths []string) []string {
	var out []string
	for _, path := range paths {
		for _, rec := range x.rec.Resources {
			var spec layerSpec
			if rec != nil && (rec.Type == samLayer || rec.Type == lambdaLayer) && json.Unmarshal(rec.Spec, &spec) == nil && spec.Path == path {
				out = append(out, spec.Digest)
				break
			}
		}
	}
	return out
}

// functionArn is a local function's ARN.
func (x *run) functionArn(name string) string {
	return "arn:" + x.partition() + ":lambda:" + x.region() + ":" + x.account() + ":function:" + name
}

// functionName is the name a function is put under, "" for one not put
// here (a container image).
func functionName(x *run, r *resource) (string, error) {
	p := propsOf(r)
	name, err := p.str("FunctionName")
	if err != nil {
		return "", err
	}
	return cmpOr(name, x.name(r.ID, 64)), nil
}

// isImage says whether a function is a container image's.
func isImage(p resProps) (bool, error) {
	pkg, err := p.str("PackageType")
	if err != nil {
		return false, err
	}
	image := pkg == "Image" || p.has("ImageUri")
	if code, ok, _ := p.obj("Code"); ok && code.has("ImageUri") {
		image = true
	}
	return image, nil
}

func (functionKind) nameOf(x *run, r *resource) (string, error) {
	if image, err := isImage(propsOf(r)); err != nil || image || x.d.Functions == nil {
		return "", err // not put here: nothing to look for
	}
	return functionName(x, r)
}

func (functionKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	if x.d.Functions == nil {
		return nil, nil
	}
	there, err := x.d.Functions.HasFunction(ctx, name)
	if err != nil || !there {
		return nil, err
	}
	return &Record{Physical: name, Attrs: map[string]any{"Arn": x.functionArn(name)}}, nil
}

// apply puts the function, then makes the schedules of its SAM Schedule
// and ScheduleV2 events (eventSchedules), which target it.
func (k functionKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	rec, action, err := k.put(ctx, x, r, prev)
	if err != nil || rec.Skipped {
		return rec, action, err
	}
	if err := x.eventSchedules(ctx, r, x.functionArn(rec.Physical)); err != nil {
		// The function is put: recorded, and its schedules made again by
		// the next deploy.
		return rec, "", err
	}
	return rec, action, nil
}

func (k functionKind) put(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	name, err := functionName(x, r)
	if err != nil {
		return nil, "", err
	}
	arn := x.functionArn(name)
	named := &Record{Physical: name, Attrs: map[string]any{"Arn": arn}, Skipped: true}
	image, err := isImage(p)
	if err != nil {
		return nil, "", err
	}
	if image {
		x.warn("%s (%s) is a container image function: only zip functions run here (Python, Node.js, provided); Ref gives %s", r.ID, r.Type, name)
		return named, Skipped, nil
	}
	if x.d.Functions == nil {
		x.warn("%s (%s) is not run here: this server has no local functions; Ref gives %s", r.ID, r.Type, name)
		return named, Skipped, nil
	}
	if r.Type == samFunction {
		x.samFunctionWarnings(r, p)
	}
	f, src, err := x.functionOf(ctx, r, p, name)
	if err != nil {
		return nil, "", err
	}
	if f.Layers, err = x.functionLayers(r, p); err != nil {
		return nil, "", err
	}
	spec := specOf(functionSpec{Function: f, Source: src.source, Digest: src.digest, Layers: x.layerDigests(f.Layers)})
	wires, err := x.eventWires(r, x.functionTarget(name), "Schedule", "ScheduleV2")
	if err != nil {
		return nil, "", err
	}
	rec := &Record{Physical: name, Attrs: map[string]any{"Arn": arn}, Spec: spec, Function: f, Wires: wires}
	made := prev != nil && !prev.Skipped && prev.Function != nil
	if made && prev.Physical == name {
		if sameSpec(prev, spec) {
			return rec, Unchanged, nil
		}
		if err := x.d.Functions.PutFunction(ctx, f); err != nil {
			return nil, "", err
		}
		return rec, Updated, nil
	}
	// A name new to this resource: one there is the stack's, or refused.
	found, err := k.find(ctx, x, name)
	if err != nil {
		return nil, "", err
	}
	own, err := x.claim(ctx, r, name, found, &Record{Physical: name, Spec: spec, Function: f})
	if err != nil {
		return nil, "", err
	}
	if err := x.d.Functions.PutFunction(ctx, f); err != nil {
		return nil, "", err
	}
	action := Created
	if own != nil {
		action = Updated
		if sameSpec(own, spec) {
			action = Unchanged
		}
	}
	if made { // renamed: the old one goes
		if err := x.d.Functions.DeleteFunction(ctx, prev.Physical); err != nil {
			return nil, "", err
		}
		return rec, Replaced, nil
	}
	return rec, action, nil
}

// remove deletes a local function, unless another stack's record has it
// too (two stacks deployed before a stack owned only what it made may
// both have recorded it): it is left to that stack.
func (functionKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	if x.d.Functions == nil || rec.Function == nil {
		return nil
	}
	other, err := x.otherStack(ctx, rec.Type, rec.Physical)
	if err != nil {
		return err
	}
	if other != "" {
		x.warn("%s (%s) %s is left as it is: stack %s's record has it too", id, rec.Type, rec.Physical, other)
		return nil
	}
	return x.d.Functions.DeleteFunction(ctx, rec.Function.Name)
}

// samFunctionWarnings warns of the SAM properties accepted and not acted
// on.
func (x *run) samFunctionWarnings(r *resource, p resProps) {
	if alias, _ := p.str("AutoPublishAlias"); alias != "" {
		x.warn("%s (%s): AutoPublishAlias %s is accepted, not published: the function runs as it is deployed", r.ID, r.Type, alias)
	}
}

// functionOf reads a function's settings and finds its code.
func (x *run) functionOf(ctx context.Context, r *resource, p resProps, name string) (*Function, *codeSource, error) {
	runtime, err := p.str("Runtime")
	if err != nil {
		return nil, nil, err
	}
	if err := checkRuntime(runtime); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p.path("Runtime"), err)
	}
	if n, ok := x.d.Functions.(VersionNoter); ok {
		if note := n.VersionNote(runtime); note != "" {
			x.warn("%s (%s): %s", r.ID, r.Type, note)
		}
	}
	handler, err := p.str("Handler")
	if err != nil {
		return nil, nil, err
	}
	if handler == "" && !strings.HasPrefix(runtime, "provided") {
		return nil, nil, p.errorf("Handler", "a %s function needs a Handler (module.function)", runtime)
	}
	timeout, err := p.num("Timeout", 3)
	if err != nil {
		return nil, nil, err
	}
	if timeout < 1 || timeout > 900 {
		return nil, nil, p.errorf("Timeout", "%d seconds: between 1 and 900", timeout)
	}
	memory, err := p.num("MemorySize", 128)
	if err != nil {
		return nil, nil, err
	}
	if memory < 128 || memory > 10240 {
		return nil, nil, p.errorf("MemorySize", "%d MB: between 128 and 10240", memory)
	}
	var env map[string]string
	if e, ok, err := p.obj("Environment"); err != nil {
		return nil, nil, err
	} else if ok {
		if env, err = e.strMap("Variables"); err != nil {
			return nil, nil, err
		}
	}
	if len(env) == 0 {
		env = nil
	}
	var src *codeSource
	if r.Type == samFunction {
		src, err = x.samCode(ctx, r, p, runtime)
	} else {
		src, err = x.lambdaCode(ctx, r, p, runtime)
	}
	if err != nil {
		return nil, nil, err
	}
	return &Function{Name: name, Runtime: runtime, Handler: handler, Code: src.path,
		Timeout: time.Duration(timeout) * time.Second, MemoryMB: memory, Env: env}, src, nil
}

// qualifierSpec is a version's or alias's properties as applied.
type qualifierSpec struct {
	Function string         `json:"function"`
	Props    map[string]any `json:"props"`
}

func (lambdaQualifierKind) apply(_ context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	fn, err := p.str("FunctionName")
	if err != nil {
		return nil, "", err
	}
	if fn == "" {
		return nil, "", p.errorf("FunctionName", "the function's name or ARN is required")
	}
	fnArn := x.unqualifiedArn(fn)
	spec := specOf(qualifierSpec{Function: fnArn, Props: r.Props})
	if prev != nil && sameSpec(prev, spec) {
		rec := *prev
		return &rec, Unchanged, nil
	}
	var rec *Record
	if r.Type == lambdaVersion {
		// A version is immutable: new properties make a new one.
		n := strconv.Itoa(x.nextVersion(fnArn))
		rec = &Record{Physical: fnArn + ":" + n, Attrs: map[string]any{"Version": n, "FunctionArn": fnArn}, Spec: spec}
	} else {
		name, err := p.str("Name")
		if err != nil {
			return nil, "", err
		}
		if name == "" {
			return nil, "", p.errorf("Name", "an alias needs a Name")
		}
		if v, _ := p.str("FunctionVersion"); v == "" {
			return nil, "", p.errorf("FunctionVersion", "an alias needs a FunctionVersion ($LATEST or a version)")
		}
		rec = &Record{Physical: fnArn + ":" + name, Attrs: map[string]any{"AliasArn": fnArn + ":" + name}, Spec: spec}
	}
	switch {
	case prev == nil:
		return rec, Created, nil
	case prev.Physical != rec.Physical:
		return rec, Replaced, nil
	}
	return rec, Updated, nil
}

func (lambdaQualifierKind) remove(context.Context, *run, string, *Record) error { return nil }

// unqualifiedArn is a function's ARN from its name or ARN (a qualifier,
// if any, dropped).
func (x *run) unqualifiedArn(fn string) string {
	if !strings.HasPrefix(fn, "arn:") {
		return x.functionArn(fn)
	}
	parts := strings.Split(fn, ":")
	if len(parts) > 7 {
		parts = parts[:7]
	}
	return strings.Join(parts, ":")
}

// nextVersion is the number of a function's next version: one more than
// the highest this stack has.
func (x *run) nextVersion(fnArn string) int {
	high := 0
	for _, recs := range []*stackRecord{x.prev, x.rec} {
		if recs == nil {
			continue
		}
		for _, rec := range recs.Resources {
			if rec == nil || rec.Type != lambdaVersion || rec.Attrs["FunctionArn"] != fnArn {
				continue
			}
			if n, err := strconv.Atoi(fmt.Sprint(rec.Attrs["Version"])); err == nil && n > high {
				high = n
			}
		}
	}
	return high + 1
}
