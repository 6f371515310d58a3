// Package itemreader parses what a Map state's ItemReader reads into its
// items, as AWS does for each ReaderConfig.InputType: a JSON array, JSON
// Lines, or CSV rows made objects by their headers.
package itemreader

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"

	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// delimiters are the CSVDelimiter values and the runes they stand for.
var delimiters = map[string]rune{"": ',', "COMMA": ',', "PIPE": '|', "SEMICOLON": ';', "SPACE": ' ', "TAB": '\t'}

// Parse reads the items of body. A failure is States.ItemReaderFailed
// with AWS's cause.
func Parse(body []byte, cfg *interp.ReaderConfig) ([]any, error) {
	body = bytes.TrimPrefix(body, []byte("\ufeff")) // a UTF-8 byte order mark is not data
	if cfg.InputType == "CSV" && cfg.CSVHeaderLocation == "GIVEN" && len(cfg.CSVHeaders) == 0 {
		return nil, failure("CSVHeaders must be given when CSVHeaderLocation is GIVEN.")
	}
	var items []any
	var err error
	switch cfg.InputType {
	case "", "JSON":
		items, err = parseJSON(body)
	case "JSONL":
		items, err = parseJSONL(body, cfg.MaxItems)
	case "CSV":
		items, err = parseCSV(body, cfg)
	default:
		return nil, failure("The input type %s is not supported.", cfg.InputType)
	}
	if err != nil {
		return nil, err
	}
	if cfg.MaxItems > 0 && int64(len(items)) > cfg.MaxItems {
		items = items[:cfg.MaxItems]
	}
	return items, nil
}

func failure(format string, args ...any) error {
	return stepwisetype.Failuref(stepwisetype.ErrorItemReaderFailed, format, args...)
}

func parseJSON(body []byte) ([]any, error) {
	v, err := jsonvalue.Parse(body)
	if err != nil {
		return nil, failure("Attempting to map over non-iterable node.")
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, failure("Attempting to map over non-iterable node.")
	}
	return arr, nil
}

func parseJSONL(body []byte, max int64) ([]any, error) {
	var items []any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 256*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v, err := jsonvalue.Parse(line)
		if err != nil {
			return nil, failure("Item #%d is not valid JSON.", len(items)+1)
		}
		items = append(items, v)
		if max > 0 && int64(len(items)) >= max {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, failure("%v", err)
	}
	return items, nil
}

func parseCSV(body []byte, cfg *interp.ReaderConfig) ([]any, error) {
	delim, ok := delimiters[cfg.CSVDelimiter]
	if !ok {
		return nil, failure("The CSV delimiter %s is not supported.", cfg.CSVDelimiter)
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.Comma = delim
	r.FieldsPerRecord = -1 // rows may have more or fewer fields than headers
	r.LazyQuotes = true
	var headers []string
	if cfg.CSVHeaderLocation == "GIVEN" {
		headers = cfg.CSVHeaders
	} else {
		first, err := r.Read()
		if errors.Is(err, io.EOF) {
			return []any{}, nil
		}
		if err != nil {
			return nil, failure("%v", err)
		}
		headers = first
	}
	seen := make(map[string]bool, len(headers))
	for _, h := range headers {
		if seen[h] {
			return nil, failure("CSV headers cannot contain duplicates.")
		}
		seen[h] = true
	}
	items := []any{}
	for {
		if cfg.MaxItems > 0 && int64(len(items)) >= cfg.MaxItems {
			break
		}
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, failure("%v", err)
		}
		obj := jsonvalue.NewObject(len(headers))
		for i, h := range headers {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			obj.Set(h, v)
		}
		items = append(items, obj)
	}
	return items, nil
}
