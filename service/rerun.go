package service

import (
	"context"
	"errors"
	"sort"
	"strconv"

	"stepwise/asl"
	"stepwise/engine"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Rerunner runs an ended execution again in a rerun mode (package
// engine's Engine is one).
type Rerunner interface {
	RerunExecution(ctx context.Context, arn string, r *interp.Rerun, dryRun bool) (*store.Execution, *interp.RerunPlan, error)
}

var _ Rerunner = (*engine.Engine)(nil)

// RerunExecutionInput asks for a rerun of a FAILED, TIMED_OUT or ABORTED
// execution.
type RerunExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	// From is FAILED, NEXT, TOP, WARNINGS or STATE:NAME.
	From string `json:"from"`
	// Output is the failed state's output for NEXT ({} when empty).
	Output string `json:"output,omitempty"`
	// Definition is a corrected definition to run on; Revision the number
	// of a published version of the state machine. At most one.
	Definition string `json:"definition,omitempty"`
	Revision   int64  `json:"revision,omitempty"`
	// DryRun only answers the preview.
	DryRun bool `json:"dryRun,omitempty"`
	// By names who asks (the operator log's "by").
	By string `json:"by,omitempty"`
}

// RerunExecutionOutput is the preview of a rerun, and its date when it
// was made.
type RerunExecutionOutput struct {
	Mode string `json:"mode"`
	// From is the state the execution starts again at ("" for the failed
	// states).
	From string `json:"from,omitempty"`
	// Rerun are the states that run again, Keep those that keep their
	// results.
	Rerun []string `json:"rerun"`
	Keep  []string `json:"keep"`
	// Added, Removed and Changed compare the definition the rerun runs on
	// with the one the execution started on.
	Added       []string           `json:"added"`
	Removed     []string           `json:"removed"`
	Changed     []string           `json:"changed"`
	DryRun      bool               `json:"dryRun,omitempty"`
	RedriveDate *history.EpochTime `json:"redriveDate,omitempty"`
	// RedriveCount is the execution's redrive count after the rerun.
	RedriveCount int `json:"redriveCount,omitempty"`
}

// RerunExecution previews (DryRun) or makes a rerun of an execution.
func (s *Service) RerunExecution(ctx context.Context, in *RerunExecutionInput) (*RerunExecutionOutput, error) {
	rr, ok := s.engine.(Rerunner)
	if !ok {
		return nil, apiErr(sfnapi.CodeValidation, "This server runs no reruns")
	}
	mode, state, err := interp.ParseRerunMode(in.From)
	if err != nil {
		return nil, apiErr(sfnapi.CodeValidation, "%v", err)
	}
	if in.Definition != "" && in.Revision != 0 {
		return nil, apiErr(sfnapi.CodeValidation, "Give a definition or a revision, not both")
	}
	if in.Output != "" && mode != interp.RerunNext {
		return nil, apiErr(sfnapi.CodeValidation, "An output is given only with NEXT")
	}
	r := &interp.Rerun{Mode: mode, State: state}
	if mode == interp.RerunNext {
		out := in.Output
		if out == "" {
			out = "{}"
		}
		if r.Output, err = jsonvalue.ParseString(out); err != nil {
			return nil, apiErr(sfnapi.CodeInvalidOutput, "Invalid Output: '%v'", err)
		}
	}
	ref, err := s.executionArnInput(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	if ref.express {
		return nil, apiErr(sfnapi.CodeValidation, "An EXPRESS execution cannot be rerun: '%s'", in.ExecutionArn)
	}
	row, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	if reason := s.notRedrivable(row, false); reason != "" {
		return nil, errExecutionNotRedrivable(row.Arn, reason)
	}
	if row.MapRunArn != "" {
		return nil, errExecutionNotRedrivable(row.Arn, "Execution was started by a Map Run and can be rerun only with it: rerun its parent execution")
	}
	started, err := s.db().RevisionGet(ctx, row.StateMachineArn, row.RevisionID)
	if err != nil {
		return nil, storeError("get definition", err)
	}
	switch {
	case in.Definition != "":
		if m, diags := asl.ParseWith([]byte(in.Definition), asl.Options{Type: asl.TypeStandard}); m == nil || asl.HasErrors(diags) {
			return nil, apiErr(sfnapi.CodeInvalidDefinition, "%s", asl.InvalidDefinitionMessage(diags))
		}
		r.Definition = in.Definition
	case in.Revision != 0:
		v, err := s.db().VersionGet(ctx, row.StateMachineArn, in.Revision)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apiErr(sfnapi.CodeValidation, "The state machine has no version %d", in.Revision)
		}
		if err != nil {
			return nil, storeError("get version", err)
		}
		rev, err := s.db().RevisionGet(ctx, row.StateMachineArn, v.RevisionID)
		if err != nil {
			return nil, storeError("get definition", err)
		}
		r.Definition = rev.Definition
	}
	if in.By != "" {
		ctx = engine.WithActor(ctx, in.By)
	}
	done, plan, err := rr.RerunExecution(ctx, row.Arn, r, in.DryRun)
	var refused *interp.RerunError
	switch {
	case errors.As(err, &refused):
		return nil, apiErr(sfnapi.CodeValidation, "The rerun is refused: %s", refused.Msg)
	case errors.Is(err, store.ErrNotFound):
		return nil, errExecutionDoesNotExist(row.Arn)
	case err != nil:
		return nil, engineError("rerun execution", err)
	}
	out := &RerunExecutionOutput{Mode: string(plan.Mode), From: plan.From, Rerun: plan.Rerun, Keep: plan.Keep, DryRun: in.DryRun}
	if r.Definition != "" {
		out.Added, out.Removed, out.Changed = DefinitionChanges(started.Definition, r.Definition)
	}
	for _, l := range []*[]string{&out.Rerun, &out.Keep, &out.Added, &out.Removed, &out.Changed} {
		if *l == nil {
			*l = []string{}
		}
	}
	if !in.DryRun && done != nil && done.RedriveDate != nil {
		d := history.EpochTime(*done.RedriveDate)
		out.RedriveDate = &d
		out.RedriveCount = done.RedriveCount
	}
	return out, nil
}

// DefinitionChanges compares two definitions state by state, wherever
// they are nested: the states added, removed, and changed (their text,
// the machines of a Parallel or Map apart, differs), each sorted.
func DefinitionChanges(oldDef, newDef string) (added, removed, changed []string) {
	a, b := stateTexts(oldDef), stateTexts(newDef)
	for n, t := range b {
		switch ot, ok := a[n]; {
		case !ok:
			added = append(added, n)
		case ot != t:
			changed = append(changed, n)
		}
	}
	for n := range a {
		if _, ok := b[n]; !ok {
			removed = append(removed, n)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	return added, removed, changed
}

// stateTexts maps each state of a definition to its JSON text without the
// machines nested in it, and with its place.
func stateTexts(def string) map[string]string {
	out := map[string]string{}
	v, err := jsonvalue.ParseString(def)
	if err != nil {
		return out
	}
	var walk func(m any, at string)
	walk = func(m any, at string) {
		mo, _ := m.(*jsonvalue.Object)
		if mo == nil {
			return
		}
		sv, _ := mo.Get("States")
		states, _ := sv.(*jsonvalue.Object)
		if states == nil {
			return
		}
		for name, st := range states.All() {
			so, _ := st.(*jsonvalue.Object)
			if so == nil {
				continue
			}
			flat := jsonvalue.NewObject(so.Len())
			for k, fv := range so.All() {
				switch k {
				case "Branches":
					list, _ := fv.([]any)
					for i, br := range list {
						walk(br, at+"/"+name+"#"+strconv.Itoa(i))
					}
				case "ItemProcessor", "Iterator":
					walk(fv, at+"/"+name)
				default:
					flat.Set(k, fv)
				}
			}
			out[name] = at + " " + jsonvalue.String(flat)
		}
	}
	walk(v, "")
	return out
}
