package sqlitestore

import (
	"context"
	"strings"

	"stepwise/store/internal/sqlcore"
)

// batchRows is how many rows one multi-row INSERT or IN list carries. With
// at most five columns it stays far below SQLite's 32766 variables.
const batchRows = 200

// insertBatch inserts n rows with one multi-row INSERT per batchRows rows.
// head is "INSERT INTO t (a, b, c)"; row appends row i's cols values to
// args. Several statements are atomic only inside a transaction, which the
// callers see to.
func insertBatch(ctx context.Context, q querier, head string, cols, n int, row func(i int, args []any) []any) error {
	for start := 0; start < n; start += batchRows {
		end := min(start+batchRows, n)
		args := make([]any, 0, (end-start)*cols)
		for i := start; i < end; i++ {
			args = row(i, args)
		}
		if _, err := q.ExecContext(ctx, valuesSQL(head, cols, end-start), args...); err != nil {
			return err
		}
	}
	return nil
}

// valuesSQL is head followed by n groups of cols placeholders.
func valuesSQL(head string, cols, n int) string {
	group := "(?" + strings.Repeat(", ?", cols-1) + ")"
	var b strings.Builder
	b.Grow(len(head) + 8 + n*(len(group)+2))
	b.WriteString(head)
	b.WriteString(" VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(group)
	}
	return b.String()
}

// tableValuesSQL is the insert of n rows into t.
func tableValuesSQL(t *sqlcore.Table, n int) string {
	return valuesSQL(t.Head(), len(t.Columns), n)
}

// placeholders is "?, ?, …" n times.
func placeholders(n int) string {
	return "?" + strings.Repeat(", ?", n-1)
}
