package asl

import (
	"math"
	"strings"

	"stepwise/jsonvalue"
)

// Processor modes and child execution types of a Map state.
const (
	ModeInline      = "INLINE"
	ModeDistributed = "DISTRIBUTED"
)

// branches reads a Parallel state's Branches.
func (p *parser) branches(st *State, v any, loc string) {
	arr, ok := p.array(v, loc)
	if !ok {
		return
	}
	if len(arr) == 0 {
		p.add(errEmpty(loc, "Branches"))
	}
	for i, b := range arr {
		bloc := index(loc, i)
		obj, ok := p.object(b, bloc)
		if !ok {
			continue
		}
		st.Branches = append(st.Branches, p.machine(obj, bloc, machineBranch))
	}
}

// mapField reads the fields only Map states have.
func (p *parser) mapField(st *State, key string, v any, loc string, lang QueryLanguage) {
	switch key {
	case "ItemProcessor", "Iterator":
		if obj, ok := p.object(v, loc); ok {
			p.processor(st, obj, loc)
		}
	case "ItemsPath":
		st.ItemsPath = p.path(v, loc, key, true)
	case "Items":
		switch t := v.(type) {
		case []any:
			st.Items = v
		case string:
			if !isExpr(t) {
				p.add(errJSONataExpr(loc, key))
				return
			}
			st.Items = v
		default:
			p.add(errType(loc, "ARRAY"))
		}
	case "ItemSelector":
		if lang == JSONPath {
			st.ItemSelector = p.template(v, loc, key)
		} else if p.jsonataPayload(v, loc, key) {
			st.ItemSelectorRaw = v
		}
	case "ItemReader":
		if p.itemReader(v, loc, lang) {
			st.ItemReader = v
		}
	case "ItemBatcher":
		if p.itemBatcher(v, loc, lang) {
			st.ItemBatcher = v
		}
	case "ResultWriter":
		if p.resultWriter(v, loc, lang) {
			st.ResultWriter = v
		}
	case "MaxConcurrency":
		st.MaxConcurrency = p.intField(v, loc, key, lang, 0, math.MaxInt64)
	case "MaxConcurrencyPath":
		st.MaxConcurrency = p.pathIntField(v, loc, key)
	case "ToleratedFailureCount":
		st.ToleratedCount = p.intField(v, loc, key, lang, 0, math.MaxInt64)
	case "ToleratedFailureCountPath":
		st.ToleratedCount = p.pathIntField(v, loc, key)
	case "ToleratedFailurePercentage":
		st.TolerancePercent = p.percentage(v, loc, key, lang)
	case "ToleratedFailurePercentagePath":
		st.TolerancePercent = p.pathIntField(v, loc, key)
	case "Label":
		st.Label, _ = p.str(v, loc)
	}
}

// percentage reads ToleratedFailurePercentage: a number from 0 to 100,
// which may have a fraction, or a JSONata expression.
func (p *parser) percentage(v any, loc, field string, lang QueryLanguage) *IntField {
	if s, ok := v.(string); ok && lang == JSONata {
		if !isExpr(s) {
			p.add(errJSONataExpr(loc, field))
			return nil
		}
		return &IntField{Expr: s}
	}
	f, ok := p.number(v, loc, 0, 100)
	if !ok {
		return nil
	}
	out := &IntField{Number: &f}
	if f == math.Trunc(f) {
		i := int64(f)
		out.Value = &i
	}
	return out
}

// processor reads a Map state's ItemProcessor (or legacy Iterator) with its
// ProcessorConfig.
func (p *parser) processor(st *State, obj *jsonvalue.Object, loc string) {
	st.ProcessorMode = ModeInline
	if v, ok := obj.Get("ProcessorConfig"); ok {
		p.processorConfig(st, v, loc+"/ProcessorConfig")
	}
	express := p.express
	if st.ProcessorMode == ModeDistributed {
		// Child workflows run as executions of their own type.
		p.express = st.ExecutionType == TypeExpress
	}
	st.ItemProcessor = p.machine(obj, loc, machineProcessor)
	p.express = express
}

func (p *parser) processorConfig(st *State, v any, loc string) {
	obj, ok := p.object(v, loc)
	if !ok {
		return
	}
	for key, fv := range obj.All() {
		floc := loc + "/" + key
		switch key {
		case "Mode":
			if s, ok := p.enum(fv, floc, ModeInline, ModeDistributed); ok {
				st.ProcessorMode = s
			}
		case "ExecutionType":
			if s, ok := p.enum(fv, floc, TypeStandard, TypeExpress); ok {
				st.ExecutionType = s
			}
		default:
			p.add(errNotSupported(loc, key))
		}
	}
	if st.ProcessorMode == ModeDistributed && !obj.Has("ExecutionType") {
		p.add(errRequired(loc, "ExecutionType"))
	}
}

// enum reads a string from a fixed set.
func (p *parser) enum(v any, loc string, values ...string) (string, bool) {
	s, ok := p.str(v, loc)
	if !ok {
		return "", false
	}
	for _, e := range values {
		if s == e {
			return s, true
		}
	}
	p.add(errEnum(loc, values...))
	return "", false
}

// checkMap checks what concerns more than one field of a Map state.
func (p *parser) checkMap(st *State, obj *jsonvalue.Object, present map[string]bool, loc string) {
	switch {
	case present["ItemProcessor"] && present["Iterator"]:
		p.add(errExclusive(loc, "ItemProcessor", "Iterator"))
	case !obj.Has("ItemProcessor") && !obj.Has("Iterator"):
		p.add(errRequired(loc, "ItemProcessor"))
	}
	pairs := [][2]string{
		{"ItemSelector", "Parameters"},
		{"MaxConcurrency", "MaxConcurrencyPath"},
		{"ToleratedFailureCount", "ToleratedFailureCountPath"},
		{"ToleratedFailurePercentage", "ToleratedFailurePercentagePath"},
	}
	for _, pr := range pairs {
		if present[pr[0]] && present[pr[1]] {
			p.add(errExclusive(loc+"/"+pr[0], pr[0], pr[1]))
		}
	}
	if st.ProcessorMode == "" {
		st.ProcessorMode = ModeInline
	}
}

// subField is how the checkers of ItemReader, ItemBatcher and ResultWriter
// describe the fields they take.
type subField struct {
	lang  QueryLanguage // "" for both
	check func(v any, loc string)
}

// checkObject checks an object against its fields, reporting unknown fields
// and fields of the other language at loc.
func (p *parser) checkObject(v any, loc string, lang QueryLanguage, fields map[string]subField) (*jsonvalue.Object, bool) {
	obj, ok := p.object(v, loc)
	if !ok {
		return nil, false
	}
	for key, fv := range obj.All() {
		f, known := fields[key]
		switch {
		case !known:
			p.add(errNotSupported(loc, key))
		case f.lang != "" && f.lang != lang:
			p.add(errWrongLanguage(loc, lang, key))
		case f.check != nil:
			f.check(fv, loc+"/"+key)
		}
	}
	return obj, true
}

func (p *parser) countField(lang QueryLanguage, field string) func(any, string) {
	return func(v any, loc string) { p.intField(v, loc, field, lang, 0, math.MaxInt64) }
}

func (p *parser) pathCheck(field string) func(any, string) {
	return func(v any, loc string) { p.path(v, loc, field, true) }
}

func (p *parser) templateCheck(field string) func(any, string) {
	return func(v any, loc string) { p.template(v, loc, field) }
}

func (p *parser) jsonataPayloadCheck(field string) func(any, string) {
	return func(v any, loc string) { p.jsonataPayload(v, loc, field) }
}

func (p *parser) enumCheck(values ...string) func(any, string) {
	return func(v any, loc string) { p.enum(v, loc, values...) }
}

// checkS3Resource checks the Resource of an ItemReader or ResultWriter.
func (p *parser) checkS3Resource(v any, loc string, actions ...string) {
	s, ok := p.str(v, loc)
	if !ok {
		return
	}
	for _, a := range actions {
		if strings.HasPrefix(s, "arn:") && strings.HasSuffix(s, ":states:::s3:"+a) {
			return
		}
	}
	examples := make([]string, len(actions))
	for i, a := range actions {
		examples[i] = "arn:<partition>:states:::s3:" + a
	}
	p.add(schemaError(loc, "The field 'Resource' does not match any of the allowed values. Examples: [%s]", strings.Join(examples, ", ")))
}

// itemReader checks the shape of a Map state's ItemReader.
func (p *parser) itemReader(v any, loc string, lang QueryLanguage) bool {
	readerConfig := func(v any, loc string) {
		cfg, ok := p.checkObject(v, loc, lang, map[string]subField{
			"InputType":         {check: p.enumCheck("CSV", "JSON", "JSONL", "MANIFEST", "PARQUET")},
			"CSVHeaderLocation": {check: p.enumCheck("FIRST_ROW", "GIVEN")},
			"CSVHeaders": {check: func(v any, loc string) {
				if arr, ok := p.array(v, loc); ok {
					for i, e := range arr {
						p.str(e, index(loc, i))
					}
				}
			}},
			"CSVDelimiter":   {check: p.enumCheck("COMMA", "PIPE", "SEMICOLON", "SPACE", "TAB")},
			"ManifestType":   {check: p.enumCheck("ATHENA_DATA", "CSV", "S3_INVENTORY")},
			"MaxItems":       {check: p.countField(lang, "MaxItems")},
			"MaxItemsPath":   {lang: JSONPath, check: p.pathCheck("MaxItemsPath")},
			"ItemsPointer":   {check: func(v any, loc string) { p.itemsPointer(v, loc) }},
			"Transformation": {check: p.enumCheck("NONE", "LOAD_AND_FLATTEN")},
		})
		if ok {
			p.readerCombinations(cfg, loc)
		}
	}
	obj, ok := p.checkObject(v, loc, lang, map[string]subField{
		"Resource":     {check: func(v any, loc string) { p.checkS3Resource(v, loc, "getObject", "listObjectsV2") }},
		"ReaderConfig": {check: readerConfig},
		"Parameters":   {lang: JSONPath, check: p.templateCheck("Parameters")},
		"Arguments":    {lang: JSONata, check: p.jsonataPayloadCheck("Arguments")},
	})
	if ok && !obj.Has("Resource") {
		p.add(errRequired(loc, "Resource"))
	}
	if ok {
		p.flatten(obj, loc)
	}
	return ok
}

// itemBatcher checks the shape of a Map state's ItemBatcher.
func (p *parser) itemBatcher(v any, loc string, lang QueryLanguage) bool {
	batchInput := p.templateCheck("BatchInput")
	if lang == JSONata {
		batchInput = p.jsonataPayloadCheck("BatchInput")
	}
	_, ok := p.checkObject(v, loc, lang, map[string]subField{
		"MaxItemsPerBatch":          {check: p.countField(lang, "MaxItemsPerBatch")},
		"MaxItemsPerBatchPath":      {lang: JSONPath, check: p.pathCheck("MaxItemsPerBatchPath")},
		"MaxInputBytesPerBatch":     {check: p.countField(lang, "MaxInputBytesPerBatch")},
		"MaxInputBytesPerBatchPath": {lang: JSONPath, check: p.pathCheck("MaxInputBytesPerBatchPath")},
		"BatchInput":                {check: batchInput},
	})
	return ok
}

// resultWriter checks the shape of a Map state's ResultWriter.
func (p *parser) resultWriter(v any, loc string, lang QueryLanguage) bool {
	writerConfig := func(v any, loc string) {
		obj, ok := p.checkObject(v, loc, lang, map[string]subField{
			"Transformation": {check: p.enumCheck("NONE", "COMPACT", "FLATTEN")},
			"OutputType":     {check: p.enumCheck("JSON", "JSONL")},
		})
		if ok && (!obj.Has("Transformation") || !obj.Has("OutputType")) {
			var missing []string
			for _, f := range []string{"Transformation", "OutputType"} {
				if !obj.Has(f) {
					missing = append(missing, f)
				}
			}
			p.add(errRequired(loc, missing...))
		}
	}
	obj, ok := p.checkObject(v, loc, lang, map[string]subField{
		"Resource":     {check: func(v any, loc string) { p.checkS3Resource(v, loc, "putObject") }},
		"Parameters":   {lang: JSONPath, check: p.templateCheck("Parameters")},
		"Arguments":    {lang: JSONata, check: p.jsonataPayloadCheck("Arguments")},
		"WriterConfig": {check: writerConfig},
	})
	if !ok {
		return false
	}
	dest := "Parameters"
	if lang == JSONata {
		dest = "Arguments"
	}
	switch {
	case obj.Len() == 0:
		p.add(errRequired(loc, "WriterConfig"))
	case obj.Has("Resource") && !obj.Has(dest):
		p.add(errRequired(loc, dest))
	case obj.Has(dest) && !obj.Has("Resource"):
		p.add(errRequired(loc, "Resource"))
	}
	return true
}
