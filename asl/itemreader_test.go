package asl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

// distributed is a machine whose one state A is a distributed Map with
// the ItemReader's ReaderConfig config (its text) in the query language
// lang ("" for JSONPath).
func distributed(config, lang string) string {
	args := `"Parameters": {"Bucket": "b", "Key": "k"}`
	if lang == "JSONata" {
		args = `"Arguments": {"Bucket": "b", "Key": "k"}`
	}
	def := machine(`"A": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
		"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},
		"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": ` + config + `, ` + args + `}, "End": true}`)
	if lang != "" {
		def = `{"QueryLanguage": "` + lang + `", ` + def[1:]
	}
	return def
}

// A listing's LOAD_AND_FLATTEN reads the objects listed, each as its
// InputType says: only with s3:listObjectsV2, and an InputType of data.
func TestReaderConfigLoadAndFlatten(t *testing.T) {
	const loc = "/States/A/ItemReader/ReaderConfig"
	listing := func(config string) string {
		return strings.Replace(distributed(config, ""), "s3:getObject", "s3:listObjectsV2", 1)
	}
	for _, ok := range []string{
		`{"InputType": "JSONL", "Transformation": "LOAD_AND_FLATTEN"}`,
		`{"InputType": "PARQUET", "Transformation": "LOAD_AND_FLATTEN", "MaxItems": 3}`,
		`{"InputType": "JSON", "Transformation": "LOAD_AND_FLATTEN", "ItemsPointer": "/rows"}`,
		`{"Transformation": "NONE"}`,
	} {
		require.Empty(t, asl.Validate([]byte(listing(ok)), asl.Options{}), ok)
	}
	for _, c := range []struct {
		def  string
		want []asl.Diagnostic
	}{
		{distributed(`{"InputType": "JSONL", "Transformation": "LOAD_AND_FLATTEN"}`, ""), []asl.Diagnostic{
			schemaDiag("Transformation LOAD_AND_FLATTEN requires the Resource arn:<partition>:states:::s3:listObjectsV2", loc)}},
		{listing(`{"Transformation": "LOAD_AND_FLATTEN"}`), []asl.Diagnostic{
			schemaDiag("Transformation LOAD_AND_FLATTEN requires InputType to be one of the following: [CSV, JSON, JSONL, PARQUET]", loc)}},
		{listing(`{"InputType": "PARQUET", "ManifestType": "ATHENA_DATA", "Transformation": "LOAD_AND_FLATTEN"}`), []asl.Diagnostic{
			schemaDiag("These fields cannot be specified together: [Transformation, ManifestType]", loc)}},
		{listing(`{"Transformation": "FLATTEN"}`), []asl.Diagnostic{
			schemaDiag("Value should be one of the following: [NONE, LOAD_AND_FLATTEN]", loc+"/Transformation")}},
	} {
		require.Equal(t, c.want, asl.Validate([]byte(c.def), asl.Options{}), c.def)
	}
}

func TestReaderConfig2025(t *testing.T) {
	const loc = "/States/A/ItemReader/ReaderConfig"
	for _, ok := range []string{
		`{"InputType": "PARQUET"}`,
		`{"InputType": "PARQUET", "MaxItems": 10}`,
		`{"InputType": "PARQUET", "ManifestType": "ATHENA_DATA"}`,
		`{"InputType": "CSV", "ManifestType": "ATHENA_DATA", "CSVHeaderLocation": "GIVEN", "CSVHeaders": ["a"]}`,
		`{"InputType": "JSONL", "ManifestType": "ATHENA_DATA"}`,
		`{"InputType": "MANIFEST", "ManifestType": "S3_INVENTORY"}`,
		`{"InputType": "JSON", "ItemsPointer": "/data/rows"}`,
		`{"InputType": "JSON", "ItemsPointer": "/a~0b/~1/0"}`,
		`{"ItemsPointer": ""}`,
	} {
		require.Empty(t, asl.Validate([]byte(distributed(ok, "")), asl.Options{}), ok)
	}
	require.Empty(t, asl.Validate([]byte(distributed(`{"InputType": "JSON", "ItemsPointer": "/rows"}`, "JSONata")), asl.Options{}))
	require.Len(t, asl.Validate([]byte(distributed(`{"InputType": "JSON", "ItemsPointer": "{% $states.input.where %}"}`, "JSONata")), asl.Options{}), 1,
		"a pointer, not an expression")

	for _, c := range []struct {
		config string
		want   []asl.Diagnostic
	}{
		{`{"InputType": "JSONL", "ItemsPointer": "/rows"}`, []asl.Diagnostic{
			schemaDiag("Field 'ItemsPointer' is supported only when InputType is JSON", loc)}},
		{`{"InputType": "JSON", "ItemsPointer": "rows"}`, []asl.Diagnostic{
			schemaDiag("The value of field 'ItemsPointer' is not a valid JSON Pointer: it must be empty or begin with '/', and '~' must be followed by '0' or '1'", loc+"/ItemsPointer")}},
		{`{"InputType": "JSON", "ItemsPointer": "/a~"}`, []asl.Diagnostic{
			schemaDiag("The value of field 'ItemsPointer' is not a valid JSON Pointer: it must be empty or begin with '/', and '~' must be followed by '0' or '1'", loc+"/ItemsPointer")}},
		{`{"InputType": "JSON", "ItemsPointer": 3}`, []asl.Diagnostic{
			schemaDiag("Expected value of type [STRING]", loc+"/ItemsPointer")}},
		{`{"InputType": "MANIFEST", "ManifestType": "ATHENA_DATA"}`, []asl.Diagnostic{
			schemaDiag("ManifestType ATHENA_DATA requires InputType to be one of the following: [CSV, JSONL, PARQUET]", loc)}},
		{`{"ManifestType": "ATHENA_DATA"}`, []asl.Diagnostic{
			schemaDiag("ManifestType ATHENA_DATA requires InputType to be one of the following: [CSV, JSONL, PARQUET]", loc)}},
		{`{"InputType": "CSV", "ManifestType": "S3_INVENTORY"}`, []asl.Diagnostic{
			schemaDiag("ManifestType S3_INVENTORY requires InputType MANIFEST", loc)}},
		{`{"InputType": "PARQUET", "CSVHeaderLocation": "FIRST_ROW", "CSVDelimiter": "TAB"}`, []asl.Diagnostic{
			schemaDiag("Field 'CSVHeaderLocation' is supported only when InputType is CSV", loc),
			schemaDiag("Field 'CSVDelimiter' is supported only when InputType is CSV", loc)}},
	} {
		require.Equal(t, c.want, asl.Validate([]byte(distributed(c.config, "")), asl.Options{}), c.config)
	}
}
