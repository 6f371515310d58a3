package asl

import (
	"strings"

	"stepwise/jsonvalue"
)

// The ReaderConfig fields AWS added to the distributed Map's ItemReader
// in 2025 (Parquet objects, Athena data manifests, arrays inside JSON
// objects), and the combinations of ReaderConfig fields that read
// nothing: each is refused when the definition is created or validated,
// not when a map run reads.

// athenaInputTypes are the InputTypes of an Athena manifest's data files.
var athenaInputTypes = []string{"CSV", "JSONL", "PARQUET"}

// csvFields are the ReaderConfig fields of CSV data.
var csvFields = []string{"CSVHeaderLocation", "CSVHeaders", "CSVDelimiter"}

// itemsPointer checks ReaderConfig.ItemsPointer: a JSON Pointer (RFC
// 6901), "" or "/"-prefixed reference tokens with '~' only as "~0" or
// "~1". It is a pointer in both query languages, never an expression.
func (p *parser) itemsPointer(v any, loc string) {
	s, ok := p.str(v, loc)
	if !ok || s == "" {
		return
	}
	bad := s[0] != '/'
	for i := 0; i < len(s) && !bad; i++ {
		bad = s[i] == '~' && (i+1 >= len(s) || (s[i+1] != '0' && s[i+1] != '1'))
	}
	if bad {
		p.add(schemaError(loc, "The value of field 'ItemsPointer' is not a valid JSON Pointer: it must be empty or begin with '/', and '~' must be followed by '0' or '1'"))
	}
}

// readerCombinations refuses the ReaderConfig fields that do not go
// together: ItemsPointer other than with JSON, an Athena manifest whose
// data files are not CSV, JSONL or PARQUET, an S3 inventory without
// InputType MANIFEST, and the CSV fields with Parquet.
func (p *parser) readerCombinations(cfg *jsonvalue.Object, loc string) {
	text := func(name string) (string, bool) {
		v, ok := cfg.Get(name)
		s, isText := v.(string)
		return s, ok && isText
	}
	input, hasInput := text("InputType")
	if _, ok := cfg.Get("ItemsPointer"); ok && hasInput && input != "JSON" {
		p.add(schemaError(loc, "Field 'ItemsPointer' is supported only when InputType is JSON"))
	}
	switch manifest, _ := text("ManifestType"); manifest {
	case "ATHENA_DATA":
		ok := false
		for _, t := range athenaInputTypes {
			ok = ok || input == t
		}
		if !ok {
			p.add(schemaError(loc, "ManifestType ATHENA_DATA requires InputType to be one of the following: [%s]", strings.Join(athenaInputTypes, ", ")))
		}
	case "S3_INVENTORY":
		if hasInput && input != "MANIFEST" {
			p.add(schemaError(loc, "ManifestType S3_INVENTORY requires InputType MANIFEST"))
		}
	}
	if input == "PARQUET" {
		for _, f := range csvFields {
			if cfg.Has(f) {
				p.add(schemaError(loc, "Field '%s' is supported only when InputType is CSV", f))
			}
		}
	}
}
