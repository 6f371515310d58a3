package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// processorMachine returns the child state machine of a map run: the
// ItemProcessor of the distributed Map labelled label in m.
func processorMachine(m *asl.StateMachine, label string) *asl.StateMachine {
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
			if p := processorMachine(s.ItemProcessor, label); p != nil {
				return p
			}
		}
		for _, b := range s.Branches {
			if p := processorMachine(b, label); p != nil {
				return p
			}
		}
	}
	return nil
}

// splitLabel splits the ARN of a map run's children's state machine,
// <state machine ARN>/<label>[/<label>...], in two: the state machine's
// ARN and the labels ("" when it is no such ARN).
func splitLabel(smArn string) (base, label string) {
	name := arnName(smArn)
	i := strings.IndexByte(name, '/')
	if i < 0 {
		return smArn, ""
	}
	return smArn[:len(smArn)-len(name)+i], name[i+1:]
}

// spoolItems carries out a distributed Map's ItemReader by keeping the
// items in the store as they are read (its map run's spool), a batch at a
// time, and answers with their number (interp.SpooledItems): neither the
// object nor its items are held, and the replay log keeps the count
// only. A read done again (the task dispatched again) starts afresh.
func (e *Engine) spoolItems(ctx context.Context, t *Task, st ItemStreamer, done func(TaskResult)) {
	arn := t.Request.Reader.Spool
	ex := e.store.Executor()
	if err := ex.MapItemsDelete(ctx, arn); err != nil {
		done(TaskResult{Failure: failure.Newf(failure.ItemReaderFailed, "The items could not be kept: %v", err)})
		return
	}
	var n int64
	var texts []string
	err := st.StreamItems(ctx, t, func(items []any) error {
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
		done(TaskResult{Failure: fl})
		return
	}
	done(TaskResult{Output: interp.SpooledItems(n)})
}
