package sqlitestore

import (
	"context"
	"strings"

	"stepwise/store/internal/sqlcore"
)

// batchRows is how many rows one multi-row INSERT carries. With
// at most five columns it stays far below SQLite's 32766 variables.
const batchRows = 200

// insertBatch inserts n rows into t with one multi-row INSERT per
// batchRows rows; row appends row i's values to args. Several statements
// are atomic only inside a transaction, which the callers see to.
func insertBatch(ctx context.Context, q sqlcore.Querier, t *sqlcore.Table, n int, row func(i int, args []any) []any) error {
	cols := len(t.Columns)
	for start := 0; start < n; start += batchRows {
		end := min(start+batchRows, n)
		args := make([]any, 0, (end-start)*cols)
		for i := start; i < end; i++ {
			args = row(i, args)
		}
		if _, err := q.Exec(ctx, tableValuesSQL(t, end-start), args...); err != nil {
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
	q := valuesSQL(t.Head(), len(t.Columns), n)
	if t.Upsert != "" {
		q += " " + t.Upsert
	}
	return q
}
