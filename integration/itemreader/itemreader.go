// Package itemreader parses what a Map state's ItemReader reads into its
// items, as AWS does for each ReaderConfig.InputType: a JSON array (or
// the array a JSON object holds at ItemsPointer), JSON Lines, CSV rows
// made objects by their headers, or the rows of a Parquet file; and the
// manifests that name data files (S3 inventories, Athena data manifests).
//
// Stream reads them as they arrive, a batch at a time, holding one batch
// and one item whatever the size of what it reads; Parse is Stream over a
// body already in memory, collected.
package itemreader

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"

	"stepwise/failure"
	"stepwise/internal/boundedfile"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// BatchSize is the most items Stream hands over at a time.
const BatchSize = 1000

// delimiters are the CSVDelimiter values and the runes they stand for.
var delimiters = map[string]rune{"": ',', "COMMA": ',', "PIPE": '|', "SEMICOLON": ';', "SPACE": ' ', "TAB": '\t'}

// MaxItemSize bounds an item's text, as AWS caps an item at 256 KiB: a
// CSV record or a JSON Lines line of more than this, its line ending
// counted (a line of this many bytes or more without it), an element
// of a JSON array of more than this, or a CSV row whose object (every
// header with its value, as JSON) would be, fails the read with an
// *ItemTooLargeError. Nothing larger is held, however long the record a
// file (a decompressed one too) runs on.
const MaxItemSize = 256 << 10

// maxItemSize is MaxItemSize, lowered by tests.
var maxItemSize = MaxItemSize

// ItemTooLargeError is the failure of an item larger than MaxItemSize.
// Failure names the object it is in.
type ItemTooLargeError struct {
	Line  int64 // where the item begins, from 1
	Limit int
}

func (e *ItemTooLargeError) Error() string {
	return fmt.Sprintf("The item at line %d is larger than %s, the most an item may be.", e.Line, boundedfile.Size(int64(e.Limit)))
}

// Failure is the States.ItemReaderFailed of the item in object
// (s3://bucket/key).
func (e *ItemTooLargeError) Failure(object string) *failure.Failure {
	return failure.Newf(failure.ItemReaderFailed, "The item at line %d of %s is larger than %s, the most an item may be.", e.Line, object, boundedfile.Size(int64(e.Limit)))
}

// readBuffer is the size of the buffer items are read through.
const readBuffer = 64 * 1024

// bom is a UTF-8 byte order mark, which is not data.
var bom = []byte("\ufeff")

// Watched is emit, keeping its error in *err, so that a reader's caller
// tells emit's refusal from the reader's own failure.
func Watched(emit func([]any) error, err *error) func([]any) error {
	return func(items []any) error {
		if e := emit(items); e != nil {
			*err = e
			return e
		}
		return nil
	}
}

// Collect is every item a stream emits, in order: the items of a reader
// that streams them, in memory.
func Collect(stream func(emit func([]any) error) error) ([]any, error) {
	items := []any{}
	err := stream(func(batch []any) error {
		items = append(items, batch...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// Parse reads the items of body. A failure is States.ItemReaderFailed
// with AWS's cause.
func Parse(body []byte, cfg *interp.ReaderConfig) ([]any, error) {
	return Collect(func(emit func([]any) error) error { return Stream(bytes.NewReader(body), cfg, emit) })
}

// Stream reads the items of r as Parse reads them from the whole body
// (the same items, the same failures, the same MaxItems) and hands them
// to emit in order, at most BatchSize at a time, as they are parsed: it
// holds a batch and the item being parsed, never the body. emit owns the
// slices it is given.
//
// An error reading r (not the data's fault) and emit's error are returned
// as they are. Where Parse fails, some batches may have been handed over
// before the failure is found: a JSON array, for one, must be well-formed
// to its end, past MaxItems, as Parse requires.
func Stream(r io.Reader, cfg *interp.ReaderConfig, emit func(items []any) error) error {
	return stream(r, cfg, BatchSize, emit)
}

func stream(r io.Reader, cfg *interp.ReaderConfig, size int, emit func([]any) error) error {
	if cfg.InputType == "PARQUET" {
		return streamParquet(r, cfg.MaxItems, size, emit)
	}
	src := &source{r: r}
	out := &sink{emit: emit, size: size, max: cfg.MaxItems}
	err := parseItems(src, cfg, out)
	if err == nil {
		err = out.flush()
	}
	switch {
	case out.err != nil:
		return out.err
	case err != nil && src.err != nil:
		return src.err
	}
	return err
}

func readerFailure(format string, args ...any) error {
	return failure.Newf(failure.ItemReaderFailed, format, args...)
}

// source is a reader that keeps its first error (other than io.EOF): a
// parse that fails because the body could not be read fails with that.
type source struct {
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// sink gathers items into batches for emit, counting them.
type sink struct {
	emit  func([]any) error
	size  int
	max   int64 // MaxItems; 0 for all
	batch []any
	n     int64 // the items taken
	err   error // emit's
}

// full reports whether MaxItems items are taken.
func (s *sink) full() bool { return s.max > 0 && s.n >= s.max }

func (s *sink) add(v any) error {
	s.batch = append(s.batch, v)
	s.n++
	if len(s.batch) >= s.size {
		return s.flush()
	}
	return nil
}

func (s *sink) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	b := s.batch
	s.batch = nil
	if err := s.emit(b); err != nil {
		s.err = err
		return err
	}
	return nil
}

// check refuses a configuration that cannot read anything, before
// anything is read.
func check(cfg *interp.ReaderConfig) error {
	if cfg.InputType == "CSV" && cfg.CSVHeaderLocation == "GIVEN" && len(cfg.CSVHeaders) == 0 {
		return readerFailure("CSVHeaders must be given when CSVHeaderLocation is GIVEN.")
	}
	if cfg.ItemsPointer != "" && cfg.InputType != "" && cfg.InputType != "JSON" {
		return readerFailure("ItemsPointer is supported only with InputType JSON, not %s.", cfg.InputType)
	}
	switch cfg.InputType {
	case "", "JSON":
		return CheckPointer(cfg.ItemsPointer)
	case "JSONL", "PARQUET":
		return nil
	case "CSV":
		if _, ok := delimiters[cfg.CSVDelimiter]; !ok {
			return readerFailure("The CSV delimiter %s is not supported.", cfg.CSVDelimiter)
		}
		if cfg.CSVHeaderLocation == "GIVEN" {
			return uniqueHeaders(cfg.CSVHeaders)
		}
		return nil
	default:
		return readerFailure("The input type %s is not supported.", cfg.InputType)
	}
}

func parseItems(src io.Reader, cfg *interp.ReaderConfig, out *sink) error {
	if err := check(cfg); err != nil {
		return err
	}
	br := bufio.NewReaderSize(src, readBuffer)
	if head, _ := br.Peek(len(bom)); bytes.Equal(head, bom) {
		_, _ = br.Discard(len(bom))
	}
	switch cfg.InputType {
	case "JSONL":
		return streamJSONL(br, out)
	case "CSV":
		return streamCSV(br, cfg, out)
	}
	if cfg.ItemsPointer != "" || firstNonSpace(br) == '{' {
		return streamPointed(br, cfg.ItemsPointer, out)
	}
	return streamJSON(br, out)
}

// firstNonSpace is the first byte of br that is not JSON white space,
// looked at without reading it; 0 when there is none in br's buffer.
func firstNonSpace(br *bufio.Reader) byte {
	for n := 1; n <= br.Size(); n *= 2 {
		head, err := br.Peek(n)
		for _, c := range head {
			if !isSpace(c) {
				return c
			}
		}
		if err != nil {
			return 0
		}
	}
	return 0
}

// The states of a JSON array's reader.
const (
	beforeArray = iota // space, then '['
	firstItem          // space, then ']' or the first item
	inItem             // an item, to the ',' or ']' after it
	afterArray         // space, then the end
)

// isSpace reports whether c is JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// streamJSON reads a JSON array an item at a time: it finds where each
// item ends (the ',' or ']' outside strings and brackets) and parses the
// item's text with jsonvalue, one level shallower than the array allows
// (as jsonvalue.Parse of the whole array would). The array is
// well-formed exactly when its frame is and every item is, so the text is
// accepted or refused as Parse refuses it, and the items are the same.
func streamJSON(r io.Reader, out *sink) error {
	notIterable := func() error { return readerFailure("Attempting to map over non-iterable node.") }
	const itemDepth = jsonvalue.DefaultMaxDepth - 1
	item := func(text []byte) error {
		if out.full() {
			// Past MaxItems an item is not taken, but must be JSON.
			s := jsonvalue.NewScanner(text)
			s.SetMaxDepth(itemDepth)
			for {
				if _, err := s.Next(); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return notIterable()
				}
			}
		}
		v, err := jsonvalue.ParseDepth(text, itemDepth)
		if err != nil {
			return notIterable()
		}
		return out.add(v)
	}
	var (
		buf      = make([]byte, readBuffer)
		pending  []byte // the start of an item read before buf
		state    = beforeArray
		depth    int // brackets open in the item
		inStr    bool
		escaped  bool
		line     = int64(1) // of the byte looked at
		itemLine int64      // where the item's text begins
	)
	// tooLarge is the failure of the item whose text begins with text;
	// the item begins after its white space.
	tooLarge := func(text []byte) error {
		at := itemLine
		for _, c := range text {
			if !isSpace(c) {
				break
			}
			if c == '\n' {
				at++
			}
		}
		return &ItemTooLargeError{Line: at, Limit: maxItemSize}
	}
	// end finishes the item that ends at buf[:i] (from buf[start:]).
	end := func(start, i int) error {
		text := buf[start:i]
		if len(pending) > 0 {
			pending = append(pending, text...)
			text = pending
		}
		if len(text) > maxItemSize {
			return tooLarge(text)
		}
		err := item(text)
		pending = pending[:0]
		if cap(pending) > 1<<20 {
			pending = nil // let a large item's text go
		}
		return err
	}
	for {
		n, rerr := r.Read(buf)
		start := 0
		for i := 0; i < n; i++ {
			c := buf[i]
			if c == '\n' {
				line++
			}
			switch state {
			case beforeArray:
				if isSpace(c) {
					continue
				}
				if c != '[' {
					return notIterable()
				}
				state = firstItem
				continue
			case afterArray:
				if !isSpace(c) {
					return notIterable()
				}
				continue
			case firstItem:
				if isSpace(c) {
					continue
				}
				if c == ']' {
					state = afterArray
					continue
				}
				state, start, itemLine = inItem, i, line
			}
			// inItem
			if inStr {
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '[', '{':
				if depth++; depth > itemDepth {
					return notIterable() // too deep, or not JSON
				}
			case ']', '}':
				if depth > 0 {
					depth--
					continue
				}
				if c == '}' {
					continue // not JSON: the item's parse refuses it
				}
				if err := end(start, i); err != nil {
					return err
				}
				state = afterArray
			case ',':
				if depth > 0 {
					continue
				}
				if err := end(start, i); err != nil {
					return err
				}
				start, itemLine = i+1, line
			}
		}
		if state == inItem {
			if len(pending)+n-start > maxItemSize {
				return tooLarge(append(pending, buf[start:n]...))
			}
			pending = append(pending, buf[start:n]...)
		}
		if rerr == io.EOF {
			if state != afterArray {
				return notIterable()
			}
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// streamJSONL reads JSON Lines: each line not blank is an item.
func streamJSONL(br *bufio.Reader, out *sink) error {
	var long []byte
	var n int64 // lines read
	for !out.full() {
		line, err := readLine(br, &long)
		if errors.Is(err, io.EOF) {
			return nil
		}
		n++
		if errors.Is(err, errLineTooLong) {
			return &ItemTooLargeError{Line: n, Limit: maxItemSize}
		}
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		v, err := jsonvalue.Parse(line)
		if err != nil {
			return readerFailure("Item #%d is not valid JSON.", out.n+1)
		}
		if err := out.add(v); err != nil {
			return err
		}
	}
	return nil
}

// errLineTooLong is readLine's error of a line past maxItemSize.
var errLineTooLong = errors.New("line too long")

// readLine reads a line without its '\n', io.EOF after the last. A line
// that does not fit in the reader's buffer is gathered in *long; one of
// maxItemSize bytes or more fails with errLineTooLong, having read no
// more than it of the line.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	tooLong := func() error { return errLineTooLong }
	maxLineSize := maxItemSize
	*long = (*long)[:0]
	if cap(*long) > 1<<20 {
		*long = nil
	}
	for {
		frag, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			frag = frag[:len(frag)-1]
			if len(*long)+len(frag) >= maxLineSize {
				return nil, tooLong()
			}
			if len(*long) == 0 {
				return frag, nil
			}
			*long = append(*long, frag...)
			return *long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			*long = append(*long, frag...)
			if len(*long) >= maxLineSize {
				return nil, tooLong()
			}
		case errors.Is(err, io.EOF):
			*long = append(*long, frag...)
			if len(*long) == 0 {
				return nil, io.EOF
			}
			if len(*long) >= maxLineSize {
				return nil, tooLong()
			}
			return *long, nil
		default:
			return nil, err
		}
	}
}

// uniqueHeaders refuses headers given twice.
func uniqueHeaders(headers []string) error {
	seen := make(map[string]bool, len(headers))
	for _, h := range headers {
		if seen[h] {
			return readerFailure("CSV headers cannot contain duplicates.")
		}
		seen[h] = true
	}
	return nil
}

// streamCSV reads CSV rows, each an object of the headers: extra fields
// dropped, missing ones empty.
func streamCSV(br *bufio.Reader, cfg *interp.ReaderConfig, out *sink) error {
	g := &recordGuard{r: br}
	r := csv.NewReader(g)
	r.Comma = delimiters[cfg.CSVDelimiter]
	r.FieldsPerRecord = -1 // rows may have more or fewer fields than headers
	r.LazyQuotes = true
	r.ReuseRecord = true
	read := func() ([]string, error) {
		row, err := r.Read()
		if err == nil {
			err = g.record(r)
		}
		if errors.Is(err, errRecordTooLarge) {
			return nil, &ItemTooLargeError{Line: g.recordLine(), Limit: maxItemSize}
		}
		return row, err
	}
	headers := cfg.CSVHeaders
	if cfg.CSVHeaderLocation != "GIVEN" {
		first, err := read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var tl *ItemTooLargeError
		if errors.As(err, &tl) {
			return err
		}
		if err != nil {
			return readerFailure("%v", err)
		}
		headers = slices.Clone(first)
		if err := uniqueHeaders(headers); err != nil {
			return err
		}
	}
	// An item is an object of every header: its size is the headers'
	// and the row's values', so that a wide header over short rows makes
	// no item larger than a record may be.
	headerSize := 1 // {"h":"v","h":"v"} without the values, escapes aside
	for _, h := range headers {
		headerSize += len(h) + 6
	}
	for !out.full() {
		row, err := read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var tl *ItemTooLargeError
		if errors.As(err, &tl) {
			return err
		}
		if err != nil {
			return readerFailure("%v", err)
		}
		itemSize := headerSize
		for _, v := range row[:min(len(row), len(headers))] {
			itemSize += len(v)
		}
		if itemSize > maxItemSize {
			line, _ := r.FieldPos(0)
			return &ItemTooLargeError{Line: int64(line), Limit: maxItemSize}
		}
		obj := jsonvalue.NewObject(len(headers))
		for i, h := range headers {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			obj.Set(h, v)
		}
		if err := out.add(obj); err != nil {
			return err
		}
	}
	return nil
}

// errRecordTooLarge is recordGuard's error of a CSV record past
// maxItemSize.
var errRecordTooLarge = errors.New("record too large")

// csvReadAhead is the most a csv.Reader reads past the end of the record
// it returned (its buffer).
const csvReadAhead = 4096

// recordGuard is what a csv.Reader reads from: it hands over no more than
// maxItemSize (and the reader's read-ahead) past the end of the last
// record, so that a record that runs on is refused before it is held, and
// it counts the lines before that end.
type recordGuard struct {
	r     io.Reader
	read  int64   // bytes handed over
	end   int64   // where the last record ended
	lines int64   // the lines before end
	nl    []int64 // where the newlines handed over at or past end are
}

func (g *recordGuard) Read(p []byte) (int, error) {
	limit := g.end + int64(maxItemSize) + csvReadAhead
	if g.read >= limit {
		return 0, errRecordTooLarge
	}
	if int64(len(p)) > limit-g.read {
		p = p[:limit-g.read]
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			break
		}
		g.nl = append(g.nl, g.read+int64(i+j))
		i += j + 1
	}
	g.read += int64(n)
	return n, err
}

// recordLine is the line the record after the last one begins on: past
// the blank lines the reader skips.
func (g *recordGuard) recordLine() int64 {
	blank := 0
	for blank < len(g.nl) && g.nl[blank] == g.end+int64(blank) {
		blank++
	}
	return g.lines + 1 + int64(blank)
}

// record takes note of the end of the record r returned last, and refuses
// the record if it is larger than maxItemSize.
func (g *recordGuard) record(r *csv.Reader) error {
	end := r.InputOffset()
	k := 0
	for k < len(g.nl) && g.nl[k] < end {
		k++
	}
	if end-g.end > int64(maxItemSize) {
		return errRecordTooLarge
	}
	g.lines += int64(k)
	g.nl = append(g.nl[:0], g.nl[k:]...)
	g.end = end
	return nil
}
