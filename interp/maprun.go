package interp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// A distributed Map runs its items as child executions of a map run. The
// interpreter works out the children's inputs (ItemSelector, then
// ItemBatcher) and the run's settings, and hands the run over as a task
// (TaskRequest.MapRun) to whoever runs the execution: the engine starts
// real executions, a Driver runs them in-process. The task's answer is the
// Map's result (one output per child, in order, or what the ResultWriter
// answered), or the map run's failure.

// MapRunRequest is a distributed Map's map run.
type MapRunRequest struct {
	Arn   string // the map run's ARN
	Label string // the Map's Label, or its state name
	// Processor is the children's state machine (the ItemProcessor).
	Processor     *asl.StateMachine
	ExecutionType string // STANDARD or EXPRESS
	// Inputs holds one input per child execution: an item (after the
	// ItemSelector), or a batch {"Items": [...], "BatchInput": ...}.
	Inputs []any
	// ItemCounts holds the number of items of each child (nil: one each).
	ItemCounts []int
	// MaxConcurrency bounds the children running at once (0: no bound).
	MaxConcurrency int64
	// ToleratedCount and TolerancePercent bound the children that may
	// fail without failing the run; both 0 when the state sets neither.
	ToleratedCount   int64 // -1: not set
	TolerancePercent float64
	// Writer is the ResultWriter, evaluated; nil when the state has none.
	Writer *ResultWriterConfig
	// Redrive is set when the map run is redriven with its execution: the
	// children that did not succeed run again.
	Redrive bool
}

// ResultWriterConfig is a Map state's ResultWriter, evaluated.
type ResultWriterConfig struct {
	Resource       string // "" when the state has only a WriterConfig
	Bucket, Prefix string
	OutputType     string // JSON (default) or JSONL
	Transformation string // NONE (default), COMPACT or FLATTEN
}

// Items is the number of items of child i.
func (r *MapRunRequest) Items(i int) int {
	if r.ItemCounts == nil {
		return 1
	}
	return r.ItemCounts[i]
}

// Exceeded reports whether failed children of total go past the run's
// tolerance (none tolerated when neither bound is set).
func (r *MapRunRequest) Exceeded(failed, total int) bool {
	if r.ToleratedCount >= 0 && int64(failed) > r.ToleratedCount {
		return true
	}
	if r.TolerancePercent > 0 && total > 0 && float64(failed)*100/float64(total) > r.TolerancePercent {
		return true
	}
	return r.ToleratedCount < 0 && r.TolerancePercent <= 0 && failed > 0
}

// ToleranceFailure is how a map run with too many failed children fails.
func ToleranceFailure() *stepwisetype.Failure {
	return stepwisetype.NewFailure(stepwisetype.ErrorExceedToleratedFailure,
		"The specified tolerated failure threshold was exceeded")
}

// mapRunArn is the ARN of the map run a Map state starts now:
// arn:…:mapRun:<state machine>/<label>:<id>, the id derived from the
// execution so that a replay finds the same one.
func (x *Execution) mapRunArn(s *asl.State) string {
	x.nextID++
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00map-run\x00%d", x.Info.ExecutionArn, x.nextID))
	h := hex.EncodeToString(sum[:16])
	id := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	return fmt.Sprintf("arn:aws:states:%s:%s:mapRun:%s/%s:%s", x.Info.Region, x.Info.Account,
		x.Info.StateMachineName, mapLabel(s), id)
}

// mapLabel is a Map state's Label, or its name.
func mapLabel(s *asl.State) string {
	if s.Label != "" {
		return s.Label
	}
	return s.Name
}

// startMapRun hands a distributed Map's items to its map run.
// A failure here ends the map run (started already) first.
func (f *frame) startMapRun(x *Execution, env *jsonpath.Env, jenv *payload.JSONataEnv) {
	s := f.state
	fail := func(err error) {
		fl := asFailure(err, s, f.enteredID)
		x.emit(f, stepwisetype.HistoryEvent{Type: stepwisetype.EventMapRunFailed, MapRunFailedEventDetails: failureDetails(fl)})
		f.stateFailed(x, fl)
	}
	inputs := make([]any, len(f.items))
	for i := range f.items {
		in, _, err := f.itemInput(x, i)
		if err != nil {
			fail(err)
			return
		}
		inputs[i] = in
	}
	req := &MapRunRequest{Arn: f.mapRunArn, Label: mapLabel(s), Processor: s.ItemProcessor, ExecutionType: s.ExecutionType,
		Inputs: inputs, MaxConcurrency: int64(f.maxConc), ToleratedCount: f.tolCount, TolerancePercent: max(f.tolPercent, 0)}
	if req.ExecutionType == "" {
		req.ExecutionType = asl.TypeStandard
	}
	if s.ItemBatcher != nil {
		if err := f.batch(x, env, jenv, req); err != nil {
			fail(err)
			return
		}
	}
	if s.ResultWriter != nil {
		w, err := f.resultWriter(env, jenv)
		if err != nil {
			fail(err)
			return
		}
		req.Writer = w
	}
	f.items = nil
	f.mapReq = req
	f.issueMapRun(x)
}

// issueMapRun asks for the frame's map run (again, on a redrive).
func (f *frame) issueMapRun(x *Execution) {
	id := x.newID("map-run")
	f.block(x, waitMapRun, id)
	x.cmds = append(x.cmds, Command{Kind: RunTask, ID: id, Task: &TaskRequest{StateName: f.state.Name, MapRun: f.mapReq}})
}

// mapRunDone goes on with a distributed Map once its map run answered.
func (f *frame) mapRunDone(x *Execution, ev Event) {
	if ev.Kind == TaskFailed {
		fl := &stepwisetype.Failure{Name: ev.Error, Cause: ev.Cause, HasCause: ev.Cause != ""}
		x.emit(f, stepwisetype.HistoryEvent{Type: stepwisetype.EventMapRunFailed, MapRunFailedEventDetails: failureDetails(fl)})
		if f.retrier(fl) < 0 {
			x.emit(f, stepwisetype.HistoryEvent{Type: stepwisetype.EventMapStateFailed})
		}
		f.stateFailed(x, fl)
		return
	}
	x.emit(f, stepwisetype.HistoryEvent{Type: stepwisetype.EventMapRunSucceeded})
	x.emitLinked(f, stepwisetype.HistoryEvent{Type: stepwisetype.EventMapStateSucceeded, PreviousEventID: f.last})
	f.mapReq = nil
	f.exit(x, ev.Output, true)
}

// reviveMapRun redrives a distributed Map whose map run failed: the map
// run runs again, its children that did not succeed only.
func (f *frame) reviveMapRun(x *Execution) {
	x.emit(f, stepwisetype.HistoryEvent{Type: stepwisetype.EventMapRunRedriven,
		MapRunRedrivenEventDetails: &stepwisetype.MapRunRedrivenEventDetails{MapRunArn: f.mapReq.Arn, RedriveCount: x.Info.RedriveCount}})
	req := *f.mapReq
	req.Redrive = true
	f.mapReq = &req
	f.issueMapRun(x)
}

// batch groups a map run's inputs as its ItemBatcher says: at most
// MaxItemsPerBatch items and MaxInputBytesPerBatch bytes of items a
// batch, each child's input {"BatchInput": ..., "Items": [...]}.
func (f *frame) batch(x *Execution, env *jsonpath.Env, jenv *payload.JSONataEnv, req *MapRunRequest) error {
	raw, _ := f.state.ItemBatcher.(*jsonvalue.Object)
	count := func(name string) (int64, error) {
		v, ok := raw.Get(name)
		if !ok {
			if p, ok := raw.Get(name + "Path"); ok && env != nil {
				path, _ := p.(string)
				cp, err := jsonpath.Compile(path)
				if err != nil {
					return 0, err
				}
				e := *env
				e.Input = f.effInput
				if v, err = cp.Eval(&e); err != nil {
					return 0, dataflow.InvalidPath(cp, err)
				}
			} else {
				return 0, nil
			}
		} else if t, isText := v.(string); isText && jenv != nil {
			tmpl, errs := payload.CompileJSONata(t)
			if len(errs) > 0 {
				return 0, errs[0]
			}
			var err error
			if v, err = tmpl.Eval(jenv, name); err != nil {
				return 0, err
			}
		}
		n, ok := numberValue(v)
		if !ok || n.Float64() != float64(int64(n.Float64())) || n.Float64() < 0 {
			return 0, stepwisetype.Failuref(stepwisetype.ErrorRuntime, "The %s field must be a positive integer, got %s.", name, jsonvalue.String(v))
		}
		return int64(n.Float64()), nil
	}
	maxItems, err := count("MaxItemsPerBatch")
	if err != nil {
		return err
	}
	maxBytes, err := count("MaxInputBytesPerBatch")
	if err != nil {
		return err
	}
	if maxBytes > 256*1024 {
		maxBytes = 256 * 1024
	}
	var batchInput any
	if v, ok := raw.Get("BatchInput"); ok {
		if jenv != nil {
			t, errs := payload.CompileJSONata(v)
			if len(errs) > 0 {
				return errs[0]
			}
			if batchInput, err = t.Eval(jenv, "BatchInput"); err != nil {
				return err
			}
		} else {
			t, errs := payload.Compile(v)
			if len(errs) > 0 {
				return errs[0]
			}
			if batchInput, err = dataflow.Template(t, f.effInput, env); err != nil {
				return err
			}
		}
	}
	var inputs []any
	var counts []int
	var cur []any
	size := 0
	flush := func() {
		if len(cur) == 0 {
			return
		}
		in := jsonvalue.NewObject(2)
		if batchInput != nil {
			in.Set("BatchInput", batchInput)
		}
		in.Set("Items", cur)
		inputs = append(inputs, in)
		counts = append(counts, len(cur))
		cur, size = nil, 0
	}
	for _, item := range req.Inputs {
		n := 0
		if maxBytes > 0 {
			x.buf = jsonvalue.Append(x.buf[:0], item)
			n = len(x.buf) + 1
		}
		if len(cur) > 0 && ((maxItems > 0 && int64(len(cur)) >= maxItems) || (maxBytes > 0 && int64(size+n) > maxBytes)) {
			flush()
		}
		cur = append(cur, item)
		size += n
	}
	flush()
	req.Inputs, req.ItemCounts = inputs, counts
	return nil
}

// resultWriter evaluates a Map state's ResultWriter.
func (f *frame) resultWriter(env *jsonpath.Env, jenv *payload.JSONataEnv) (*ResultWriterConfig, error) {
	raw, _ := f.state.ResultWriter.(*jsonvalue.Object)
	w := &ResultWriterConfig{OutputType: "JSON", Transformation: "NONE"}
	if v, ok := raw.Get("Resource"); ok {
		w.Resource, _ = v.(string)
	}
	if c, ok := raw.Get("WriterConfig"); ok {
		if obj, ok := c.(*jsonvalue.Object); ok {
			if v, ok := obj.Get("OutputType"); ok {
				w.OutputType, _ = v.(string)
			}
			if v, ok := obj.Get("Transformation"); ok {
				w.Transformation, _ = v.(string)
			}
		}
	}
	var params any
	if jenv != nil {
		if v, ok := raw.Get("Arguments"); ok {
			t, errs := payload.CompileJSONata(v)
			if len(errs) > 0 {
				return nil, errs[0]
			}
			var err error
			if params, err = t.Eval(jenv, "Arguments"); err != nil {
				return nil, err
			}
		}
	} else if v, ok := raw.Get("Parameters"); ok {
		t, errs := payload.Compile(v)
		if len(errs) > 0 {
			return nil, errs[0]
		}
		var err error
		if params, err = dataflow.Template(t, f.effInput, env); err != nil {
			return nil, err
		}
	}
	if obj, ok := params.(*jsonvalue.Object); ok {
		if v, ok := obj.Get("Bucket"); ok {
			w.Bucket, _ = v.(string)
		}
		if v, ok := obj.Get("Prefix"); ok {
			w.Prefix, _ = v.(string)
		}
	}
	if w.Resource != "" && w.Bucket == "" {
		return nil, stepwisetype.NewFailure(stepwisetype.ErrorResultWriterFailed, "The ResultWriter needs a Bucket.")
	}
	return w, nil
}

// ChildSummary is what a map run's child result shows of the child.
type ChildSummary struct {
	Arn, Name, StateMachineArn string
	Status                     stepwisetype.ExecutionStatus
	Input                      string
	Output, Error, Cause       *string
	StartDate                  time.Time
	StopDate                   *time.Time
	RedriveCount               int
}

// ChildEntry is a child's result with its metadata, as AWS writes it with
// the NONE transformation (and returns it for a child that did not
// succeed, whatever the transformation): DescribeExecution's members in
// PascalCase, dates as ISO 8601 text.
func ChildEntry(c *ChildSummary) *jsonvalue.Object {
	included := jsonvalue.NewObject(1)
	included.Set("Included", true)
	o := jsonvalue.NewObject(16)
	if c.Cause != nil {
		o.Set("Cause", *c.Cause)
	}
	if c.Error != nil {
		o.Set("Error", *c.Error)
	}
	o.Set("ExecutionArn", c.Arn)
	o.Set("Input", c.Input)
	o.Set("InputDetails", included)
	o.Set("Name", c.Name)
	if c.Output != nil && c.Status == stepwisetype.StatusSucceeded {
		o.Set("Output", *c.Output)
		o.Set("OutputDetails", included)
	}
	o.Set("RedriveCount", jsonvalue.NumberFromInt(int64(c.RedriveCount)))
	if c.Status == stepwisetype.StatusSucceeded || c.Status == stepwisetype.StatusRunning {
		o.Set("RedriveStatus", "NOT_REDRIVABLE")
		o.Set("RedriveStatusReason", "Execution is "+string(c.Status)+" and cannot be redriven")
	} else {
		o.Set("RedriveStatus", "REDRIVABLE_BY_MAP_RUN")
	}
	o.Set("StartDate", c.StartDate.UTC().Format("2006-01-02T15:04:05.000Z"))
	o.Set("StateMachineArn", c.StateMachineArn)
	o.Set("Status", string(c.Status))
	if c.StopDate != nil {
		o.Set("StopDate", c.StopDate.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	return o
}
