package maprunner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"stepwise/asl"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// Processor returns the child state machine of a map run: the
// ItemProcessor of the distributed Map labelled label in m (nil when m
// has none).
func Processor(m *asl.StateMachine, label string) *asl.StateMachine {
	for _, name := range m.Order {
		s := m.States[name]
		if s.Type == asl.TypeMap && s.ItemProcessor != nil {
			l := s.Label
			if l == "" {
				l = s.Name
			}
			if l == label && s.ProcessorMode == asl.ModeDistributed || l == label && s.ItemReader != nil {
				return s.ItemProcessor
			}
			if p := Processor(s.ItemProcessor, label); p != nil {
				return p
			}
		}
		for _, b := range s.Branches {
			if p := Processor(b, label); p != nil {
				return p
			}
		}
	}
	return nil
}

// SplitLabel splits the ARN of a map run's children's state machine,
// <state machine ARN>/<label>[/<label>...], in two: the state machine's
// ARN and the labels ("" when it is no such ARN).
func SplitLabel(smArn string) (base, label string) {
	name := arnName(smArn)
	i := strings.IndexByte(name, '/')
	if i < 0 {
		return smArn, ""
	}
	return smArn[:len(smArn)-len(name)+i], name[i+1:]
}

// Spool carries out a distributed Map's ItemReader whose items are kept
// in the store as Items reads them (interp.ReaderRequest.Spool: its map
// run's spool), a task.KindRunner.
type Spool struct {
	Store store.Driver
	Items task.ItemStreamer
}

// Takes takes an ItemReader's task that spools its items.
func (Spool) Takes(t *task.Task) bool {
	return t.Request.Reader != nil && t.Request.Reader.Spool != ""
}

// Run reads the items.
func (s Spool) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	go s.spool(ctx, t, done)
}

// Cancel does nothing: the read goes on, its result is not applied.
func (Spool) Cancel(string, string) {}

// spool keeps the items in the store as they are read, a batch at a
// time, and answers with their number (interp.SpooledItems): neither the
// object nor its items are held, and the replay log keeps the count
// only. A read done again (the task dispatched again) starts afresh.
func (s Spool) spool(ctx context.Context, t *task.Task, done func(task.Result)) {
	arn := t.Request.Reader.Spool
	ex := s.Store.Executor()
	if err := ex.MapItemsDelete(ctx, arn); err != nil {
		done(task.Result{Failure: failure.Newf(failure.ItemReaderFailed, "The items could not be kept: %v", err)})
		return
	}
	var n int64
	var texts []string
	err := s.Items.StreamItems(ctx, t, func(items []any) error {
		texts = texts[:0]
		for _, it := range items {
			texts = append(texts, jsonvalue.String(it))
		}
		if err := ex.MapItemsPut(ctx, arn, n, texts); err != nil {
			return fmt.Errorf("the items could not be kept: %w", err)
		}
		n += int64(len(items))
		return nil
	})
	if err != nil {
		var fl *failure.Failure
		if !errors.As(err, &fl) {
			fl = failure.Newf(failure.ItemReaderFailed, "%v", err)
		}
		done(task.Result{Failure: fl})
		return
	}
	done(task.Result{Output: interp.SpooledItems(n)})
}
