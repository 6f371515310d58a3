package pgstore

import (
	"context"
	"strconv"
	"strings"

	"stepwise/store/internal/sqlcore"
)

// unnestSQL is the insert of t's rows from one array per column: one
// statement of one text, prepared once per connection, inserts any number
// of them, all or none.
func unnestSQL(t *sqlcore.Table) string {
	var b strings.Builder
	b.WriteString(t.Head() + "\nSELECT * FROM unnest(")
	for i, typ := range t.Types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i+1) + "::" + typ + "[]")
	}
	b.WriteString(")")
	if t.Upsert != "" {
		b.WriteString("\n" + t.Upsert)
	}
	return b.String()
}

// The inserts of StepWrite's timers and tasks.
var (
	timerInsertSQL = unnestSQL(&sqlcore.TimerTable)
	taskInsertSQL  = unnestSQL(&sqlcore.TaskTable)
)

// insertRows is Dialect.InsertRows: one statement, whatever n.
func insertRows(ctx context.Context, c sqlcore.Conn, t *sqlcore.Table, n int, row func(i int, args []any) []any) error {
	a := newArrays(t.Types...)
	var args []any
	for i := range n {
		args = row(i, args[:0])
		a.add(args...)
	}
	_, err := c.Writer().Exec(ctx, unnestSQL(t), a.cols...)
	return err
}

// arrays are rows' values gathered into one array per column, of the
// columns' SQL types (bigint, text or bytea).
type arrays struct {
	cols []any // []int64, []string or [][]byte
	n    int   // rows
}

func newArrays(types ...string) *arrays {
	a := &arrays{cols: make([]any, len(types))}
	for i, t := range types {
		switch t {
		case "bigint":
			a.cols[i] = []int64{}
		case "text":
			a.cols[i] = []string{}
		case "bytea":
			a.cols[i] = [][]byte{}
		default:
			panic("pgstore: no arrays of " + t)
		}
	}
	return a
}

// add appends a row, its values in the columns' order and of their types.
func (a *arrays) add(row ...any) {
	for i, v := range row {
		switch col := a.cols[i].(type) {
		case []int64:
			a.cols[i] = append(col, v.(int64))
		case []string:
			a.cols[i] = append(col, v.(string))
		case [][]byte:
			a.cols[i] = append(col, v.([]byte))
		}
	}
	a.n++
}
