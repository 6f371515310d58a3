package itemreader

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"strings"

	"stepwise/interp"
)

// An Athena data manifest (ReaderConfig.ManifestType ATHENA_DATA) is the
// <query id>-manifest.csv an Athena query (an UNLOAD, a CTAS or a SELECT)
// writes beside its results: one line per data file, its S3 URI
// (s3://bucket/key). The items are the rows of every data file in the
// manifest's order, each file read as ReaderConfig.InputType says (CSV,
// JSONL or PARQUET), a gzip-compressed CSV or JSONL file (as UNLOAD
// writes them) decompressed on the fly.

// AthenaFile is one data file an Athena manifest names.
type AthenaFile struct{ Bucket, Key string }

// AthenaInputTypes are the InputTypes of an Athena manifest's data files.
var AthenaInputTypes = []string{"CSV", "JSONL", "PARQUET"}

// ParseAthenaManifest reads an Athena data manifest: each line not blank
// is an s3:// URI. An empty manifest names no files (a query without
// rows).
func ParseAthenaManifest(body []byte) ([]AthenaFile, error) {
	body = bytes.TrimPrefix(body, bom)
	var files []AthenaFile
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		rest, ok := strings.CutPrefix(text, "s3://")
		bucket, key, _ := strings.Cut(rest, "/")
		if !ok || bucket == "" || key == "" {
			return nil, readerFailure("The Athena data manifest is not valid: line %d is not an S3 URI (s3://bucket/key).", line)
		}
		files = append(files, AthenaFile{Bucket: bucket, Key: key})
	}
	if err := sc.Err(); err != nil {
		return nil, readerFailure("The Athena data manifest is not valid: %v", err)
	}
	return files, nil
}

// CheckAthena refuses a ReaderConfig whose data files an Athena manifest
// cannot name.
func CheckAthena(cfg *interp.ReaderConfig) error {
	for _, t := range AthenaInputTypes {
		if cfg.InputType == t {
			return nil
		}
	}
	return readerFailure("The input type %s is not supported with ManifestType ATHENA_DATA: the data files must be CSV, JSONL or PARQUET.", cfg.InputType)
}

// StreamAthenaFile reads one data file of an Athena manifest as cfg says
// (its MaxItems the items still to take), decompressing a gzip-compressed
// CSV or JSONL file.
func StreamAthenaFile(r io.Reader, cfg *interp.ReaderConfig, emit func(items []any) error) error {
	if cfg.InputType == "PARQUET" {
		return StreamParquet(r, cfg.MaxItems, emit)
	}
	src := &source{r: r}
	br := bufio.NewReaderSize(src, readBuffer)
	head, _ := br.Peek(2)
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		err := Stream(br, cfg, emit)
		if err != nil && src.err != nil {
			return src.err
		}
		return err
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		if src.err != nil {
			return src.err
		}
		return readerFailure("A data file of the Athena manifest could not be decompressed: %v", err)
	}
	data := &source{r: zr}
	err = Stream(data, cfg, emit)
	if err != nil && data.err != nil && src.err == nil {
		return readerFailure("A data file of the Athena manifest could not be decompressed: %v", data.err)
	}
	if err != nil && src.err != nil {
		return src.err
	}
	return err
}
