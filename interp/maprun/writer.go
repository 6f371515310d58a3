package maprun

import (
	"slices"
	"strings"

	"stepwise/jsonvalue"
)

// Writer is a Map state's ResultWriter, evaluated.
type Writer struct {
	Resource       string // "" when the state has only a WriterConfig
	Bucket, Prefix string
	OutputType     string // JSON (default) or JSONL
	Transformation string // NONE (default), COMPACT or FLATTEN
}

// Outcome is what a run whose children all ended within its tolerance
// answers with its ResultWriter w (nil: none): the children's results,
// transformed (NONE: each child's entry, COMPACT: the outputs, FLATTEN:
// array outputs flattened; a child that did not succeed is its entry
// whatever the transformation). With no Resource that is the state's
// result (output); with one, the files to write by status (write).
// entries are the children's ChildEntry in order, wanted for NONE only
// (needEntries).
func (r *Run) Outcome(w *Writer, entries []*jsonvalue.Object) (output []any, write *Write) {
	if w == nil {
		return r.results, nil
	}
	var succeeded, failed, all []any
	for i, s := range r.state {
		var out []any
		switch {
		case s != Succeeded:
			failed = append(failed, r.results[i])
			all = append(all, r.results[i])
			continue
		case entries != nil:
			out = []any{entries[i]}
		case w.Transformation == "FLATTEN":
			if arr, ok := r.results[i].([]any); ok {
				out = arr
			} else {
				out = []any{r.results[i]}
			}
		default:
			out = []any{r.results[i]}
		}
		succeeded = append(succeeded, out...)
		all = append(all, out...)
	}
	if w.Resource == "" {
		if all == nil {
			all = []any{}
		}
		return all, nil
	}
	files := map[string][]any{}
	if len(succeeded) > 0 {
		files["SUCCEEDED"] = succeeded
	}
	if len(failed) > 0 {
		files["FAILED"] = failed
	}
	return nil, &Write{Resource: w.Resource, Bucket: w.Bucket, Prefix: w.Prefix, OutputType: w.OutputType, Files: files}
}

// NeedsEntries says whether Outcome wants the children's entries.
func (w *Writer) NeedsEntries() bool { return w != nil && w.Transformation == "NONE" }

// Write is the writing of a map run's results by its ResultWriter, a
// task of its own (interp.TaskRequest.Write) that the integrations carry
// out through their S3 client: one object per status with results
// (Objects), then the manifest listing them. The task's answer is the Map
// state's result (Answer), or a States.ResultWriterFailed failure.
type Write struct {
	Resource   string // arn:aws:states:::s3:putObject
	Bucket     string
	Prefix     string // "" for none
	OutputType string // JSON or JSONL
	MapRunArn  string
	// Files holds the results to write by status (SUCCEEDED, FAILED,
	// PENDING), transformed as the WriterConfig says; a status without
	// results has no file.
	Files map[string][]any
}

// Object is an object a Write puts.
type Object struct {
	Key  string
	Body []byte
}

// The statuses a manifest always lists, empty or not, as AWS writes them.
var manifestStatuses = []string{"FAILED", "PENDING", "SUCCEEDED"}

// Objects are the objects the write puts, in order: one per status with
// results, <Prefix>/<map run id>/<STATUS>_0.json (AWS keeps the .json
// name for JSONL too: the content changes, not the name), then
// manifest.json beside them listing every status's files with their
// sizes.
func (w *Write) Objects() []Object {
	dir := w.dir()
	statuses := slices.Clone(manifestStatuses)
	for status := range w.Files {
		if !slices.Contains(statuses, status) {
			statuses = append(statuses, status)
		}
	}
	slices.Sort(statuses)
	var objects []Object
	files := jsonvalue.NewObject(len(statuses))
	for _, status := range statuses {
		listed := []any{}
		if results := w.Files[status]; len(results) > 0 {
			o := Object{Key: dir + status + "_0.json", Body: encodeResults(results, w.OutputType)}
			objects = append(objects, o)
			file := jsonvalue.NewObject(2)
			file.Set("Key", o.Key)
			file.Set("Size", jsonvalue.NumberFromInt(int64(len(o.Body))))
			listed = append(listed, file)
		}
		files.Set(status, listed)
	}
	manifest := jsonvalue.NewObject(3)
	manifest.Set("DestinationBucket", w.Bucket)
	manifest.Set("MapRunArn", w.MapRunArn)
	manifest.Set("ResultFiles", files)
	return append(objects, Object{Key: w.ManifestKey(), Body: jsonvalue.Marshal(manifest)})
}

// ManifestKey is the key of the write's manifest.
func (w *Write) ManifestKey() string { return w.dir() + "manifest.json" }

// Answer is the Map state's result once the objects are written:
// {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}, the key the
// manifest's.
func (w *Write) Answer() *jsonvalue.Object {
	details := jsonvalue.NewObject(2)
	details.Set("Bucket", w.Bucket)
	details.Set("Key", w.ManifestKey())
	out := jsonvalue.NewObject(2)
	out.Set("MapRunArn", w.MapRunArn)
	out.Set("ResultWriterDetails", details)
	return out
}

// dir is the folder of the run's objects, ending in "/": the map run's id
// (the ARN's last segment) under the prefix, with no leading slash for no
// prefix and no doubled one for a prefix ending in "/".
func (w *Write) dir() string {
	id := w.MapRunArn[strings.LastIndexByte(w.MapRunArn, ':')+1:]
	prefix := w.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return prefix + id + "/"
}

// encodeResults is a status file's content: the results as one JSON
// array, or for JSONL one result a line, each line ending in a newline.
func encodeResults(results []any, outputType string) []byte {
	if outputType != "JSONL" {
		return jsonvalue.Append(nil, results)
	}
	var b []byte
	for _, v := range results {
		b = jsonvalue.Append(b, v)
		b = append(b, '\n')
	}
	return b
}
