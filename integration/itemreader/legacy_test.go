package itemreader

// The reader as it was before it streamed: the whole body parsed at once.
// It is kept, word for word but for its names (and the line limit, a
// variable here so tests can reach it), as the reference the streaming
// reader must agree with (FuzzStreamMatchesParse).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"io"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

func legacyParse(body []byte, cfg *interp.ReaderConfig) ([]any, error) {
	body = bytes.TrimPrefix(body, []byte("\ufeff")) // a UTF-8 byte order mark is not data
	if cfg.InputType == "CSV" && cfg.CSVHeaderLocation == "GIVEN" && len(cfg.CSVHeaders) == 0 {
		return nil, readerFailure("CSVHeaders must be given when CSVHeaderLocation is GIVEN.")
	}
	var items []any
	var err error
	switch cfg.InputType {
	case "", "JSON":
		items, err = legacyParseJSON(body)
	case "JSONL":
		items, err = legacyParseJSONL(body, cfg.MaxItems)
	case "CSV":
		items, err = legacyParseCSV(body, cfg)
	default:
		return nil, readerFailure("The input type %s is not supported.", cfg.InputType)
	}
	if err != nil {
		return nil, err
	}
	if cfg.MaxItems > 0 && int64(len(items)) > cfg.MaxItems {
		items = items[:cfg.MaxItems]
	}
	return items, nil
}

func legacyParseJSON(body []byte) ([]any, error) {
	v, err := jsonvalue.Parse(body)
	if err != nil {
		return nil, readerFailure("Attempting to map over non-iterable node.")
	}
	if obj, ok := v.(*jsonvalue.Object); ok {
		return Entries(obj), nil // an object's members, as AWS iterates them
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, readerFailure("Attempting to map over non-iterable node.")
	}
	return arr, nil
}

func legacyParseJSONL(body []byte, max int64) ([]any, error) {
	var items []any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, min(64*1024, maxItemSize)), maxItemSize)
	var lines int64
	for sc.Scan() {
		lines++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v, err := jsonvalue.Parse(line)
		if err != nil {
			return nil, readerFailure("Item #%d is not valid JSON.", len(items)+1)
		}
		items = append(items, v)
		if max > 0 && int64(len(items)) >= max {
			break
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, &ItemTooLargeError{Line: lines + 1, Limit: maxItemSize}
	} else if err != nil {
		return nil, readerFailure("%v", err)
	}
	return items, nil
}

func legacyParseCSV(body []byte, cfg *interp.ReaderConfig) ([]any, error) {
	delim, ok := delimiters[cfg.CSVDelimiter]
	if !ok {
		return nil, readerFailure("The CSV delimiter %s is not supported.", cfg.CSVDelimiter)
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
			return nil, readerFailure("%v", err)
		}
		headers = first
	}
	seen := make(map[string]bool, len(headers))
	for _, h := range headers {
		if seen[h] {
			return nil, readerFailure("CSV headers cannot contain duplicates.")
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
			return nil, readerFailure("%v", err)
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

func (m *Manifest) legacyParseInventory(body []byte, maxItems int64) ([]any, error) {
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, readerFailure("An inventory file could not be decompressed: %v", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return nil, readerFailure("An inventory file could not be decompressed: %v", err)
		}
	}
	return legacyParse(body, &interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: m.Schema,
		CSVDelimiter: "COMMA", MaxItems: maxItems})
}
