package maprun

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

// The spool keeps a map run's items SpoolPage to a row, as a JSON array
// (a page), page k at index pagesAt+k: a row costs more than a small
// item (its key holds the map run's ARN; 110 bytes a row, and as much
// CPU to write, read and delete as the child's own rows save), and the
// planner reads a thousand items at a time. A spool written an item to a
// row (at the items' indexes, from 0) is still read: it is told from a
// paged one by a row at index 0, which a paged spool never has.
const (
	SpoolPage       = 100
	pagesAt   int64 = -1 << 62
)

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

// spool keeps the items in the store as they are read, the full pages of
// each batch read at a time, and answers with their number
// (interp.SpooledItems): neither the object nor its items are held, and
// the replay log keeps the count only. A read done again (the task
// dispatched again) starts afresh.
func (s Spool) spool(ctx context.Context, t *task.Task, done func(task.Result)) {
	arn := t.Request.Reader.Spool
	ex := s.Store.Executor()
	if err := ex.MapItemsDelete(ctx, arn); err != nil {
		done(task.Result{Failure: failure.Newf(failure.ItemReaderFailed, "The items could not be kept: %v", err)})
		return
	}
	var n int64 // items read
	var page []byte
	var pages []string
	kept := int64(0) // pages kept
	put := func() error {
		if err := ex.MapItemsPut(ctx, arn, pagesAt+kept, pages); err != nil {
			return fmt.Errorf("the items could not be kept: %w", err)
		}
		kept += int64(len(pages))
		pages = pages[:0]
		return nil
	}
	err := s.Items.StreamItems(ctx, t, func(items []any) error {
		for _, it := range items {
			page = appendItem(page, n, it)
			n++
			if n%SpoolPage == 0 {
				pages = append(pages, string(append(page, ']')))
			}
		}
		return put()
	})
	if err == nil && n%SpoolPage != 0 {
		pages = append(pages, string(append(page, ']')))
		err = put()
	}
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

// appendItem adds item i to its page: the first of a page begins it.
func appendItem(page []byte, i int64, item any) []byte {
	if i%SpoolPage == 0 {
		page = append(page[:0], '[')
	} else {
		page = append(page, ',')
	}
	return jsonvalue.Append(page, item)
}

// spoolReader reads a map run's spooled items for its planner
// (interp.ItemSource).
type spoolReader struct {
	ctx context.Context
	ex  store.Executor
	arn string
	// known: whether the spool is paged or an item to a row was looked
	// at; perItem: an item to a row.
	known, perItem bool
}

// read returns up to limit items from index from, in order.
func (s *spoolReader) read(from int64, limit int) ([]any, error) {
	if !s.known {
		rows, err := s.ex.MapItemsList(s.ctx, s.arn, 0, 1)
		if err != nil {
			return nil, err
		}
		s.known, s.perItem = true, len(rows) > 0
	}
	if s.perItem {
		texts, err := s.ex.MapItemsList(s.ctx, s.arn, from, limit)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(texts))
		for i, t := range texts {
			if out[i], err = jsonvalue.ParseString(t); err != nil {
				return nil, fmt.Errorf("spooled item %d: %w", from+int64(i), err)
			}
		}
		return out, nil
	}
	first, skip := from/SpoolPage, int(from%SpoolPage)
	texts, err := s.ex.MapItemsList(s.ctx, s.arn, pagesAt+first, (skip+limit+SpoolPage-1)/SpoolPage)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, limit)
	for i, t := range texts {
		v, err := jsonvalue.ParseString(t)
		if err != nil {
			return nil, fmt.Errorf("spooled page %d: %w", first+int64(i), err)
		}
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("spooled page %d is not an array", first+int64(i))
		}
		if i == 0 {
			items = items[min(skip, len(items)):]
		}
		out = append(out, items...)
	}
	return out[:min(limit, len(out))], nil
}
