package maprun

import (
	"time"

	"stepwise/history"
	"stepwise/jsonvalue"
)

// ChildSummary is what a map run knows of an ended child: what its result
// shows (ChildEntry) and, for a child that succeeded, its output.
type ChildSummary struct {
	Arn, Name, StateMachineArn string
	Status                     history.ExecutionStatus
	Input                      string
	// Output is the output's JSON text; OutputValue, when set, the
	// output itself (a host that has it spares the parse).
	Output       *string
	OutputValue  any
	Error, Cause *string
	StartDate    time.Time
	StopDate     *time.Time
	RedriveCount int
}

// output is the output of a child that succeeded.
func (c *ChildSummary) output() any {
	if c.OutputValue != nil || c.Output == nil {
		return c.OutputValue
	}
	v, err := jsonvalue.ParseString(*c.Output)
	if err != nil {
		return nil
	}
	return v
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
	if c.Status == history.StatusSucceeded && (c.Output != nil || c.OutputValue != nil) {
		if c.Output != nil {
			o.Set("Output", *c.Output)
		} else {
			o.Set("Output", jsonvalue.String(c.OutputValue))
		}
		o.Set("OutputDetails", included)
	}
	o.Set("RedriveCount", jsonvalue.NumberFromInt(int64(c.RedriveCount)))
	if c.Status == history.StatusSucceeded || c.Status == history.StatusRunning {
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
