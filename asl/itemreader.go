package asl

import (
	"fmt"
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

// flattenInputTypes are the InputTypes of the objects a listing's
// LOAD_AND_FLATTEN reads.
var flattenInputTypes = []string{"CSV", "JSON", "JSONL", "PARQUET"}

// flatten refuses a ReaderConfig.Transformation LOAD_AND_FLATTEN that
// cannot read: it reads the objects an s3:listObjectsV2 listing names,
// each as its InputType says.
func (p *parser) flatten(reader *jsonvalue.Object, loc string) {
	cfgV, _ := reader.Get("ReaderConfig")
	cfg, _ := cfgV.(*jsonvalue.Object)
	if cfg == nil {
		return
	}
	if t, _ := cfg.Get("Transformation"); t != "LOAD_AND_FLATTEN" {
		return
	}
	cloc := loc + "/ReaderConfig"
	if res, _ := reader.Get("Resource"); !strings.HasSuffix(fmt.Sprint(res), ":states:::s3:listObjectsV2") {
		p.add(schemaError(cloc, "Transformation LOAD_AND_FLATTEN requires the Resource arn:<partition>:states:::s3:listObjectsV2"))
	}
	input, _ := cfg.Get("InputType")
	ok := false
	for _, t := range flattenInputTypes {
		ok = ok || input == t
	}
	if !ok {
		p.add(schemaError(cloc, "Transformation LOAD_AND_FLATTEN requires InputType to be one of the following: [%s]", strings.Join(flattenInputTypes, ", ")))
	}
	if cfg.Has("ManifestType") {
		p.add(schemaError(cloc, "These fields cannot be specified together: [Transformation, ManifestType]"))
	}
}
