// Package deploy creates, updates and deletes the resources of a
// CloudFormation or SAM template (a CDK app's synthesized stacks too) on
// a running Stepwise: state machines, activities, versions, aliases and
// schedules through the service and the scheduler in process; Lambda
// functions as local functions (Functions); DynamoDB tables, S3 buckets,
// SQS queues, SNS topics and EventBridge buses at the configured AWS
// endpoint. Every other resource type gets a name and an ARN, so that
// Ref and Fn::GetAtt resolve, and is listed as skipped.
//
// A deployed stack's record (Records) keeps, per logical id, what was
// made and with what: a second deploy of an unchanged template changes
// nothing, a changed resource is updated (a state machine gets a new
// revision), a resource gone from the template is deleted, and Delete
// deletes the stack's resources, the last created first. A stack owns
// only what it made (or took over with Options.Adopt): a named resource
// found there that it did not make fails the deploy, and the intent of
// each create is recorded before the call, so a deploy stopped part way
// leaves nothing unowned (own.go).
package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"stepwise/deploy/cfn"
	"stepwise/scheduler"
	"stepwise/service"
)

// Deployer deploys templates onto one server.
type Deployer struct {
	Service   *service.Service
	Scheduler *scheduler.Service // nil: schedules are refused
	Functions Functions          // nil: Lambda functions are skipped
	Records   Records
	AWS       *AWSEndpoint // nil: AWS resources are named, not created
	Wiring    Wiring       // nil: event sources are not delivered
	// APIAddr is where the Wiring serves the APIs' routes (host:port),
	// for the report; empty: the APIs' local addresses are not reported.
	APIAddr string
	Log     *slog.Logger // nil: not logged

	mu sync.Mutex // one deploy or delete at a time
}

// Options are a deploy's settings.
type Options struct {
	// StackName names the stack (AWS::StackName); it is the key of the
	// stack's record.
	StackName string
	// Parameters are the template's parameter values, and pseudo
	// parameters' (AWS::Region and AWS::AccountId are the service's).
	Parameters map[string]string
	// BaseDir is the folder a template's relative paths (DefinitionUri,
	// CodeUri, a CDK asset) are read from.
	BaseDir string
	// Adopt takes over a named resource that is there and that the
	// stack has no record of (made by hand): it becomes the stack's own,
	// deleted with it. Without it such a resource fails the deploy with
	// an AlreadyExistsError.
	Adopt bool
}

// Functions is where a template's Lambda functions go: the server's
// local functions.
type Functions interface {
	// PutFunction adds the function or replaces the one of its name.
	PutFunction(ctx context.Context, f *Function) error
	// DeleteFunction removes a function; removing one that is not there
	// is not an error.
	DeleteFunction(ctx context.Context, name string) error
	// HasFunction says whether a function of that name is there that
	// PutFunction would replace (one it refuses to, as a server's own,
	// is not counted: PutFunction says why).
	HasFunction(ctx context.Context, name string) (bool, error)
}

// Function is a Lambda function run locally.
type Function struct {
	Name    string `json:"name"`
	Runtime string `json:"runtime"` // as the template says: python3.12, nodejs20.x, provided.al2023
	Handler string `json:"handler"`
	// Code is the absolute path of the code: a folder or a .zip file.
	Code     string            `json:"code"`
	Timeout  time.Duration     `json:"timeout,omitempty"`
	MemoryMB int               `json:"memoryMB,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	// Layers are its layers' content, in order: folders or .zip files.
	Layers []string `json:"layers,omitempty"`
}

// Records keeps the deployed stacks' records (the JSON is the deployer's
// own).
type Records interface {
	// GetStack returns a stack's record; nil and no error when there is
	// none.
	GetStack(ctx context.Context, name string) ([]byte, error)
	PutStack(ctx context.Context, name string, body []byte) error
	// DeleteStack deletes a record; deleting none is not an error.
	DeleteStack(ctx context.Context, name string) error
	ListStacks(ctx context.Context) ([]string, error)
}

// AWSEndpoint is where DynamoDB tables, S3 buckets, SQS queues, SNS
// topics and EventBridge buses are created (moto_server, say).
type AWSEndpoint struct {
	URL             string // http://127.0.0.1:5000
	Region          string
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// Action is what a deploy did with a resource.
type Action string

const (
	Created   Action = "created"
	Updated   Action = "updated"
	Replaced  Action = "replaced"
	Unchanged Action = "unchanged"
	Deleted   Action = "deleted"
	Retained  Action = "retained" // DeletionPolicy Retain: left as it is
	Adopted   Action = "adopted"  // there already, taken over (Options.Adopt)
	Skipped   Action = "skipped"  // a type not made here: named only
)

// Change is one resource in a Report.
type Change struct {
	LogicalID string `json:"logicalId"`
	Type      string `json:"type"`
	Physical  string `json:"physicalId,omitempty"`
	Action    Action `json:"action"`
	Note      string `json:"note,omitempty"`
}

// Output is one of the template's Outputs, resolved.
type Output struct {
	Key         string `json:"key"`
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
	Export      string `json:"export,omitempty"`
}

// Report is what a deploy or a delete did.
type Report struct {
	Stack    string   `json:"stack"`
	Changes  []Change `json:"changes"`
	Outputs  []Output `json:"outputs,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// APIs are where the stack's APIs are served locally (wire_api.go).
	APIs []ServedAPI `json:"apis,omitempty"`
}

// Changed says whether the deploy changed anything.
func (r *Report) Changed() bool {
	for _, c := range r.Changes {
		if c.Action != Unchanged && c.Action != Skipped {
			return true
		}
	}
	return false
}

// WriteText writes the report for a terminal: a line per resource, the
// skipped ones and the warnings, then the outputs.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "stack %s\n", r.Stack)
	var skipped []Change
	for _, c := range r.Changes {
		if c.Action == Skipped {
			skipped = append(skipped, c)
			continue
		}
		line := fmt.Sprintf("  %-9s %s (%s)", c.Action, c.LogicalID, c.Type)
		if c.Physical != "" {
			line += " " + c.Physical
		}
		if c.Note != "" {
			line += ": " + c.Note
		}
		fmt.Fprintln(w, line)
	}
	if !r.Changed() {
		fmt.Fprintln(w, "  no changes")
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "skipped (named only, not created here):")
		for _, c := range skipped {
			line := fmt.Sprintf("  %s (%s) %s", c.LogicalID, c.Type, c.Physical)
			if c.Note != "" {
				line += ": " + c.Note
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintln(w, "warning: "+warn)
	}
	if len(r.APIs) > 0 {
		fmt.Fprintln(w, "APIs served locally:")
		for _, a := range r.APIs {
			fmt.Fprintf(w, "  %s %s/ (%s)\n", a.API, a.URL, strings.Join(a.Routes, ", "))
		}
	}
	if len(r.Outputs) > 0 {
		fmt.Fprintln(w, "outputs:")
		for _, o := range r.Outputs {
			fmt.Fprintf(w, "  %s = %s\n", o.Key, o.Value)
		}
	}
}

// Deploy creates or updates the stack opts.StackName from t. A resource
// that fails stops the deploy: what was done before it stays, is
// recorded, and is reported with the error (the next deploy carries on).
func (d *Deployer) Deploy(ctx context.Context, t *cfn.Template, opts Options) (*Report, error) {
	if err := checkStackName(opts.StackName); err != nil {
		return nil, err
	}
	// The files its AWS::Include transforms name, from its folder.
	t, err := t.Include(ctx, opts.BaseDir)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	prev, err := d.readRecord(ctx, opts.StackName)
	if err != nil {
		return nil, err
	}
	params := map[string]string{}
	for k, v := range opts.Parameters {
		params[k] = v
	}
	cfg := d.Service.Config()
	params["AWS::StackName"] = opts.StackName
	params["AWS::Region"] = cfg.Region
	params["AWS::AccountId"] = cfg.Account
	params["AWS::Partition"] = cmpOr(cfg.Partition, "aws")
	stack, err := cfn.Prepare(t, params)
	if err != nil {
		return nil, err
	}
	x := &run{d: d, stack: stack, opts: opts, prev: prev,
		rec:     &stackRecord{Name: opts.StackName, Resources: map[string]*Record{}},
		report:  &Report{Stack: opts.StackName, Changes: []Change{}, Warnings: slices.Clone(t.Warnings)},
		adopted: map[string]bool{}}
	x.rec.Parameters = opts.Parameters
	if prev != nil {
		x.written, _ = json.Marshal(prev)
		x.pending = slices.Clone(prev.Creating)
	}
	// A resource there that the stack did not make is refused before
	// anything is made.
	if err := x.preflight(ctx); err != nil {
		d.logReport(x.report, err)
		return x.report, err
	}
	err = x.apply(ctx)
	if err == nil {
		err = x.removeGone(ctx)
	}
	if err == nil {
		err = x.removePending(ctx)
	}
	if err == nil {
		// (After a failure, what the deletions left for the end were
		// to make way for may not have happened: they are not made.)
		x.cleanUp(ctx)
		err = x.outputs()
	}
	// What a failed deploy did not reach stays as the last one left it,
	// and recorded, so that the next deploy (or a delete) finds it. The
	// record is written even when the deploy was cancelled.
	final := x.rec
	if err != nil {
		final = x.merged()
	}
	if perr := x.checkpoint(ctx, final); perr != nil {
		err = errors.Join(err, perr)
	}
	x.setWires(ctx, final)
	x.report.APIs = x.servedAPIs(final)
	d.logReport(x.report, err)
	return x.report, err
}

// Delete deletes the stack's resources, those created last first, and
// its record. Deleting a stack that has no record is an error.
func (d *Deployer) Delete(ctx context.Context, stackName string) (*Report, error) {
	if err := checkStackName(stackName); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	prev, err := d.readRecord(ctx, stackName)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		return nil, fmt.Errorf("stack %s does not exist", stackName)
	}
	x := &run{d: d, opts: Options{StackName: stackName}, prev: prev,
		rec:     &stackRecord{Name: stackName, Parameters: prev.Parameters, Resources: maps.Clone(prev.Resources), Order: prev.Order},
		report:  &Report{Stack: stackName, Changes: []Change{}},
		pending: slices.Clone(prev.Creating)}
	// What deploys that stopped were making goes first: it was made
	// last.
	if err := x.removePending(ctx); err != nil {
		x.rec.Creating = x.pending
		if perr := d.writeRecord(context.WithoutCancel(ctx), x.rec, prev); perr != nil {
			err = errors.Join(err, perr)
		}
		return x.report, err
	}
	if len(x.pending) > 0 {
		x.warn("%d resources that deploys that stopped may have made could not be looked for; they are left as they are", len(x.pending))
	}
	x.rec.Creating = x.pending
	for _, id := range slices.Backward(prev.Order) {
		if err := x.removeOne(ctx, id, prev.Resources[id]); err != nil {
			if perr := d.writeRecord(context.WithoutCancel(ctx), x.rec, prev); perr != nil {
				err = errors.Join(err, perr)
			}
			return x.report, err
		}
	}
	if err := d.Records.DeleteStack(ctx, stackName); err != nil {
		return x.report, err
	}
	x.setWires(ctx, &stackRecord{Name: stackName})
	d.logReport(x.report, nil)
	return x.report, nil
}

// Stacks lists the deployed stacks' names.
func (d *Deployer) Stacks(ctx context.Context) ([]string, error) {
	return d.Records.ListStacks(ctx)
}

// Restore puts every recorded stack's functions back into Functions and
// its event sources into Wiring: a server calls it when it starts, as
// both live in memory.
func (d *Deployer) Restore(ctx context.Context) error {
	if d.Functions == nil && d.Wiring == nil {
		return nil
	}
	names, err := d.Records.ListStacks(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		rec, err := d.readRecord(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, id := range rec.Order {
			if f := rec.Resources[id].Function; f != nil && d.Functions != nil {
				if err := d.Functions.PutFunction(ctx, f); err != nil {
					errs = append(errs, fmt.Errorf("stack %s, resource %s: %w", name, id, err))
				}
			}
		}
		if err := d.restoreWires(ctx, name, rec); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *Deployer) logReport(r *Report, err error) {
	if d.Log == nil {
		return
	}
	counts := map[Action]int{}
	for _, c := range r.Changes {
		counts[c.Action]++
	}
	attrs := []any{"stack", r.Stack}
	for _, a := range []Action{Created, Adopted, Updated, Replaced, Unchanged, Deleted, Retained, Skipped} {
		if counts[a] > 0 {
			attrs = append(attrs, string(a), counts[a])
		}
	}
	if err != nil {
		d.Log.Warn("stack not deployed", append(attrs, "error", err)...)
	} else {
		d.Log.Info("stack deployed", attrs...)
	}
	for _, w := range r.Warnings {
		d.Log.Warn(w, "stack", r.Stack)
	}
}

// checkStackName applies CloudFormation's rule for stack names.
func checkStackName(name string) error {
	if name == "" {
		return errors.New("no stack name")
	}
	if len(name) > 128 {
		return fmt.Errorf("stack name %q: at most 128 characters", name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-')
		if !ok {
			return fmt.Errorf("stack name %q: letters, digits and '-', starting with a letter", name)
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// outputText is an output's value as text: a list joined by commas.
func outputText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = outputText(e)
		}
		return strings.Join(parts, ",")
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}
