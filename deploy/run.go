package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"stepwise/deploy/cfn"
	"stepwise/wiring"
)

// A kind makes the resources of one or more types.
type kind interface {
	// apply creates the resource, or brings the one prev recorded to
	// props, and returns its new record and what it did. prev is nil for
	// a new resource; prev.Type is always the resource's type. An
	// apply that finds nothing to change returns prev (or an equal
	// record) and Unchanged. An apply that fails after it made the
	// resource returns its record with the error: it is kept, so the
	// next deploy finds the resource.
	apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error)
	// remove deletes what rec recorded; one already gone is not an
	// error.
	remove(ctx context.Context, x *run, id string, rec *Record) error
}

// kinds are the kinds by resource type; types with none are skipped
// (other.go).
var kinds = map[string]kind{}

func register(k kind, types ...string) {
	for _, t := range types {
		if _, dup := kinds[t]; dup {
			panic("deploy: two kinds for " + t)
		}
		kinds[t] = k
	}
}

// resource is one of the template's resources as a kind sees it.
type resource struct {
	ID    string
	Type  string
	Props map[string]any // resolved: no intrinsic functions left
	Def   cfn.Resource   // as the template has it (Metadata, DeletionPolicy)
}

// Record is what a deploy made of one resource: enough to resolve Ref
// and Fn::GetAtt in a later deploy, to see a change, and to delete it.
type Record struct {
	Type string `json:"type"`
	// Physical is what Ref gives: a name or an ARN, per type.
	Physical string `json:"physical"`
	// Attrs are what Fn::GetAtt gives.
	Attrs map[string]any `json:"attrs,omitempty"`
	// Spec is what the kind applied, in its own terms: a deploy whose
	// spec equals the record's has nothing to change.
	Spec json.RawMessage `json:"spec,omitempty"`
	// Function is the local function this resource is, for Restore.
	Function *Function `json:"function,omitempty"`
	// Wires are the event sources the resource declares (wire.go).
	Wires []wiring.Wire `json:"wires,omitempty"`
	// Retain is DeletionPolicy Retain: the resource outlives the stack.
	Retain bool `json:"retain,omitempty"`
	// Adopted: found at the AWS endpoint and used as it was by a deploy
	// of an earlier version, which took what was there unasked; such a
	// resource outlives the stack too. (One taken over with
	// Options.Adopt is the stack's own.)
	Adopted bool `json:"adopted,omitempty"`
	// Skipped: a type not made here, named only.
	Skipped bool `json:"skipped,omitempty"`
	// Implicit: made by SAM on its own, for the resource it names.
	Implicit string `json:"implicit,omitempty"`

	// created is when the resource a finder found was made, zero when
	// its service does not tell (not recorded).
	created time.Time
}

// stackRecord is a stack's record, the JSON kept in Records.
type stackRecord struct {
	Name       string             `json:"name"`
	Parameters map[string]string  `json:"parameters,omitempty"`
	Resources  map[string]*Record `json:"resources"`
	// Order is the order the resources were made in.
	Order   []string `json:"order"`
	Outputs []Output `json:"outputs,omitempty"`
	// Creating are the resources whose create call was (or was about
	// to be) made and whose record was not written yet (own.go).
	Creating []*intent `json:"creating,omitempty"`
}

func (d *Deployer) readRecord(ctx context.Context, name string) (*stackRecord, error) {
	body, err := d.Records.GetStack(ctx, name)
	if err != nil || body == nil {
		return nil, err
	}
	var rec stackRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, fmt.Errorf("stack %s: its record is damaged: %w", name, err)
	}
	if rec.Resources == nil {
		rec.Resources = map[string]*Record{}
	}
	return &rec, nil
}

// merged is the stack's record as it stands: what this deploy made so
// far and, of the last deploy's, what it has not reached (nor removed).
func (x *run) merged() *stackRecord {
	rec := &stackRecord{Name: x.rec.Name, Parameters: x.rec.Parameters, Resources: maps.Clone(x.rec.Resources),
		Order: slices.Clone(x.rec.Order), Outputs: x.rec.Outputs}
	// The intents: this deploy's, and the last deploy's it has not
	// settled.
	rec.Creating = append(slices.Clone(x.rec.Creating), x.pending...)
	if x.prev != nil {
		for _, id := range x.prev.Order {
			if _, done := rec.Resources[id]; !done && !x.gone[id] {
				rec.Resources[id] = x.prev.Resources[id]
				rec.Order = append(rec.Order, id)
			}
		}
		if rec.Outputs == nil {
			rec.Outputs = x.prev.Outputs
		}
	}
	return rec
}

// checkpoint writes rec when it differs from what was last written, even
// when ctx was cancelled: after each resource a deploy makes or removes,
// so that a server that stops mid-deploy (killed, or its database lost)
// has recorded everything it made.
func (x *run) checkpoint(ctx context.Context, rec *stackRecord) error {
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if bytes.Equal(body, x.written) {
		return nil
	}
	if err := x.d.Records.PutStack(context.WithoutCancel(ctx), rec.Name, body); err != nil {
		return err
	}
	x.written = body
	return nil
}

// writeRecord keeps rec, unless it equals prev.
func (d *Deployer) writeRecord(ctx context.Context, rec, prev *stackRecord) error {
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if prev != nil {
		if old, err := json.Marshal(prev); err == nil && bytes.Equal(old, body) {
			return nil
		}
	}
	return d.Records.PutStack(ctx, rec.Name, body)
}

// run is one deploy or delete.
type run struct {
	// others is what the other stacks own (othersOwn), read at the first
	// need; othersErr, why it could not be.
	others    map[string]string
	othersErr error
	// written is the record as last written (or read), gone the ids
	// this deploy removed: checkpoint writes only what changed.
	written []byte
	gone    map[string]bool
	d       *Deployer
	stack   *cfn.Stack // nil in a delete
	opts    Options
	prev    *stackRecord // nil for a new stack
	rec     *stackRecord // what this run made so far
	report  *Report
	// later are deletions left for the end of a deploy, when nothing
	// made in it refers to the old resource any more (a replaced
	// version, which an alias routes to until the alias is updated):
	// CloudFormation's cleanup. A failure there is a warning.
	later []func(context.Context) error
	// pending are the last deploy's intents not settled yet (own.go);
	// adopted the logical ids taken over with Options.Adopt; notes what
	// a resource's change is reported with.
	pending []*intent
	adopted map[string]bool
	notes   map[string]string
	// warned are the made-up attributes (id.attr) warned of.
	warned map[string]bool
}

// made drops a resource's intent, its record has it now; it says whether
// there was one.
func (x *run) made(id string) bool {
	n := len(x.rec.Creating)
	x.rec.Creating = slices.DeleteFunc(x.rec.Creating, func(it *intent) bool { return it.LogicalID == id })
	return len(x.rec.Creating) < n
}

// reported is the action and note a resource made by its kind's apply is
// reported with: taken over, or made by a deploy that stopped.
func (x *run) reported(id string, action Action) (Action, string) {
	switch {
	case x.adopted[id]:
		return Adopted, "taken over: now the stack's own, deleted with it"
	case x.notes[id] != "" && action == Unchanged:
		return Created, x.notes[id]
	}
	return action, x.notes[id]
}

// cleanUp runs the deletions left for the end of the deploy.
func (x *run) cleanUp(ctx context.Context) {
	for _, f := range x.later {
		if err := f(ctx); err != nil {
			x.warn("cleanup: %v", err)
		}
	}
	x.later = nil
}

// warn adds a warning to the report.
func (x *run) warn(format string, args ...any) {
	x.report.Warnings = append(x.report.Warnings, fmt.Sprintf(format, args...))
}

// Stack is the stack's name; Pseudo a pseudo parameter's value.
func (x *run) Stack() string { return x.opts.StackName }

// A run without a service (a preview of the definitions) takes the
// region, account and partition of the stack's pseudo parameters.

func (x *run) region() string {
	if x.d.Service == nil {
		return x.stack.Pseudo("AWS::Region")
	}
	return x.d.Service.Config().Region
}

func (x *run) account() string {
	if x.d.Service == nil {
		return x.stack.Pseudo("AWS::AccountId")
	}
	return x.d.Service.Config().Account
}

func (x *run) partition() string {
	if x.d.Service == nil {
		return x.stack.Pseudo("AWS::Partition")
	}
	return cmpOr(x.d.Service.Config().Partition, "aws")
}

// name is the name of a resource whose template gives none:
// STACK-LogicalId, cut to max characters (CloudFormation adds a random
// suffix; a fixed name lets a later deploy find the resource).
func (x *run) name(id string, max int) string {
	n := x.opts.StackName + "-" + id
	if len(n) > max {
		// Cut, with a hash of the whole: ids that differ only at the
		// end (CDK's hash suffixes) keep different names.
		sum := sha256.Sum256([]byte(n))
		n = n[:max-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return n
}

// apply makes or updates each resource in dependency order.
func (x *run) apply(ctx context.Context) error {
	t := x.stack.Template()
	for _, id := range x.stack.Order {
		def := t.Resources[id]
		props, err := x.stack.Properties(id, x)
		if err != nil {
			return err
		}
		r := &resource{ID: id, Type: def.Type, Props: props, Def: def}
		var prev *Record
		if x.prev != nil {
			prev = x.prev.Resources[id]
		}
		if prev != nil && prev.Type != r.Type {
			// A logical id that changed its type is a new resource.
			if err := x.removeOne(ctx, id, prev); err != nil {
				return err
			}
			prev = nil
		}
		k := kinds[r.Type]
		if k == nil || def.NamedOnly {
			k = otherKind{}
		}
		order, changes := len(x.rec.Order), len(x.report.Changes)
		rec, action, err := k.apply(ctx, x, r, prev)
		if err != nil {
			if rec != nil {
				// Made before it failed: recorded, for the next deploy.
				x.made(id)
				rec.Type = r.Type
				rec.Retain = def.DeletionPolicy == "Retain"
				x.rec.Resources[id] = rec
				x.rec.Order = slices.Insert(x.rec.Order, order, id)
				_ = x.checkpoint(ctx, x.merged()) // the deploy's end writes it again, and says if it cannot
			}
			return &ResourceError{LogicalID: id, Type: r.Type, Err: err}
		}
		intended := x.made(id)
		action, note := x.reported(id, action)
		rec.Type = r.Type
		rec.Implicit = def.Implicit
		rec.Retain = def.DeletionPolicy == "Retain"
		x.rec.Resources[id] = rec
		// Before what its apply made on its behalf (a SAM state
		// machine's schedules), which goes first when it is deleted.
		x.rec.Order = slices.Insert(x.rec.Order, order, id)
		if def.Implicit == "" || action != Skipped {
			// (What SAM makes on its own and is only named here is no
			// news: the template does not list it.)
			x.report.Changes = slices.Insert(x.report.Changes, changes, Change{LogicalID: id, Type: r.Type, Physical: rec.Physical, Action: action, Note: note})
		}
		// (Nothing made or changed, nothing to record yet: the end
		// writes what an unchanged resource's record may have new. One
		// created as its intent said is written with the next write,
		// the next intent's: until then the intent has it.)
		if action != Unchanged && action != Skipped && !(action == Created && intended) {
			if err := x.checkpoint(ctx, x.merged()); err != nil {
				return err
			}
		}
		if action == Skipped && !quiet[r.Type] && def.Implicit == "" {
			x.warn("%s (%s) is not made here: Ref gives %s", id, r.Type, rec.Physical)
		}
	}
	return nil
}

// removeGone deletes the resources of the last deploy that this one's
// template no longer has (or whose Condition is now false), the last
// made first.
func (x *run) removeGone(ctx context.Context) error {
	if x.prev == nil {
		return nil
	}
	for _, id := range slices.Backward(x.prev.Order) {
		if _, kept := x.rec.Resources[id]; kept {
			continue
		}
		if err := x.removeOne(ctx, id, x.prev.Resources[id]); err != nil {
			return err
		}
	}
	return nil
}

// removeOne deletes one recorded resource (or leaves it, for Retain) and
// reports it.
func (x *run) removeOne(ctx context.Context, id string, rec *Record) error {
	if rec == nil {
		return nil
	}
	action, note := Deleted, ""
	switch {
	case rec.Retain || rec.Adopted:
		action = Retained
	case rec.Skipped:
	case x.stack != nil && x.madeAgain(id, rec) != "":
		// Moved to another logical id, which has it now under the same
		// name: kept.
		action, note = Retained, "now "+x.madeAgain(id, rec)+"'s"
	default:
		k := kinds[rec.Type]
		if k == nil {
			k = otherKind{}
		}
		if err := k.remove(ctx, x, id, rec); err != nil {
			return &ResourceError{LogicalID: id, Type: rec.Type, Err: err}
		}
	}
	if x.rec != nil && x.stack == nil { // a delete: the record shrinks as it goes
		delete(x.rec.Resources, id)
		x.rec.Order = slices.DeleteFunc(x.rec.Order, func(s string) bool { return s == id })
	}
	if x.stack != nil {
		if x.gone == nil {
			x.gone = map[string]bool{}
		}
		x.gone[id] = true
		if _, remade := x.rec.Resources[id]; !remade { // (a type changed: made again next)
			if err := x.checkpoint(ctx, x.merged()); err != nil {
				return err
			}
		}
	}
	if rec.Implicit == "" || !rec.Skipped {
		x.report.Changes = append(x.report.Changes, Change{LogicalID: id, Type: rec.Type, Physical: rec.Physical, Action: action, Note: note})
	}
	return nil
}

// madeAgain names the resource of this deploy, other than id, that has
// what rec recorded (the same type and Ref value); "" when none does.
func (x *run) madeAgain(id string, rec *Record) string {
	for other, r := range x.rec.Resources {
		if other != id && r.Type == rec.Type && r.Physical == rec.Physical {
			return other
		}
	}
	return ""
}

func (x *run) outputs() error {
	outs, err := x.stack.Outputs(x)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(outs))
	for k := range outs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := outs[k]
		x.report.Outputs = append(x.report.Outputs, Output{Key: k, Value: outputText(o.Value), Description: o.Description, Export: o.Export})
	}
	x.rec.Outputs = x.report.Outputs
	return nil
}

// Ref is cfn.Resolver's: what the resource made in this run is.
func (x *run) Ref(id string) (string, error) {
	rec := x.rec.Resources[id]
	if rec == nil {
		return "", fmt.Errorf("resource %s is not made yet", id)
	}
	return rec.Physical, nil
}

// GetAtt is cfn.Resolver's.
func (x *run) GetAtt(id, attr string) (any, error) {
	rec := x.rec.Resources[id]
	if rec == nil {
		return nil, fmt.Errorf("resource %s is not made yet", id)
	}
	v, ok := rec.Attrs[attr]
	if !ok && rec.Skipped {
		// A type not made here has whatever attribute its service
		// documents.
		return x.skippedAttr(id, rec, attr)
	}
	if !ok {
		names := sortedKeys(rec.Attrs)
		if len(names) == 0 {
			return nil, fmt.Errorf("%s (%s) has no attributes", id, rec.Type)
		}
		return nil, fmt.Errorf("%s (%s) has no attribute %s; it has %s", id, rec.Type, attr, strings.Join(names, ", "))
	}
	return v, nil
}

// ImportValue is cfn.Importer's: the exports of the other stacks
// deployed here.
func (x *run) ImportValue(name string) (string, error) {
	stacks, err := x.d.Records.ListStacks(context.Background())
	if err != nil {
		return "", err
	}
	for _, s := range stacks {
		if s == x.opts.StackName {
			continue
		}
		rec, err := x.d.readRecord(context.Background(), s)
		if err != nil || rec == nil {
			continue
		}
		for _, o := range rec.Outputs {
			if o.Export == name {
				return o.Value, nil
			}
		}
	}
	return "", fmt.Errorf("no stack deployed here exports %q", name)
}

// ResourceError is a resource that could not be made, updated or
// deleted.
type ResourceError struct {
	LogicalID, Type string
	Err             error
}

func (e *ResourceError) Error() string {
	return fmt.Sprintf("resource %s (%s): %v", e.LogicalID, e.Type, e.Err)
}

func (e *ResourceError) Unwrap() error { return e.Err }

// specOf is a spec's JSON, the same for equal specs (map keys sorted).
func specOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("deploy: a spec that is not JSON: " + err.Error())
	}
	return b
}

// sameSpec says whether a recorded resource was applied with spec.
func sameSpec(prev *Record, spec json.RawMessage) bool {
	return prev != nil && bytes.Equal(prev.Spec, spec)
}
