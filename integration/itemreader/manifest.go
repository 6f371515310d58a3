package itemreader

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

// An S3 inventory manifest (InputType MANIFEST) names the inventory's
// data files; each line of those (CSV, gzip-compressed as S3 writes them)
// is an item whose members are the manifest's fileSchema:
//
//	{"sourceBucket": "…", "destinationBucket": "arn:aws:s3:::inventory",
//	 "fileFormat": "CSV", "fileSchema": "Bucket, Key, Size, LastModifiedDate",
//	 "files": [{"key": "…/data/….csv.gz", "size": 2046, "MD5checksum": "…"}]}

// Manifest is an S3 inventory manifest, as far as reading it needs.
type Manifest struct {
	Bucket string   // the bucket of the data files
	Schema []string // the members of each item
	Keys   []string // the data files
}

// ParseManifest reads an inventory manifest.json.
func ParseManifest(body []byte) (*Manifest, error) {
	v, err := jsonvalue.Parse(bytes.TrimPrefix(body, []byte("\ufeff")))
	obj, _ := v.(*jsonvalue.Object)
	if err != nil || obj == nil {
		return nil, readerFailure("The manifest is not an S3 inventory manifest: it is not a JSON object.")
	}
	str := func(name string) string {
		v, _ := obj.Get(name)
		s, _ := v.(string)
		return s
	}
	if f := str("fileFormat"); f != "CSV" {
		return nil, readerFailure("The S3 inventory's fileFormat is %q: only CSV inventories can be read.", f)
	}
	m := &Manifest{Bucket: str("destinationBucket")}
	if i := strings.LastIndex(m.Bucket, ":::"); i >= 0 {
		m.Bucket = m.Bucket[i+3:]
	}
	if m.Bucket == "" {
		return nil, readerFailure("The manifest names no destinationBucket.")
	}
	for _, f := range strings.Split(str("fileSchema"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			m.Schema = append(m.Schema, f)
		}
	}
	if len(m.Schema) == 0 {
		return nil, readerFailure("The manifest has no fileSchema.")
	}
	files, _ := obj.Get("files")
	arr, ok := files.([]any)
	if !ok {
		return nil, readerFailure("The manifest has no files.")
	}
	for _, f := range arr {
		fo, _ := f.(*jsonvalue.Object)
		if fo == nil {
			return nil, readerFailure("A file of the manifest is not an object.")
		}
		k, _ := fo.Get("key")
		key, _ := k.(string)
		if key == "" {
			return nil, readerFailure("A file of the manifest has no key.")
		}
		m.Keys = append(m.Keys, key)
	}
	return m, nil
}

// ParseInventory reads one data file of an inventory (gzip-compressed or
// not): CSV rows whose fields are the manifest's schema.
func (m *Manifest) ParseInventory(body []byte, maxItems int64) ([]any, error) {
	return Collect(func(emit func([]any) error) error { return m.StreamInventory(bytes.NewReader(body), maxItems, emit) })
}

// StreamInventory is ParseInventory as Stream reads: the rows of r, at
// most maxItems (0 for all), handed to emit as they are read, a
// gzip-compressed file decompressed on the fly. The whole file must
// decompress, as ParseInventory requires: a corrupt file fails, even
// where its rows stop early (maxItems) or are refused, with the
// decompression's failure.
func (m *Manifest) StreamInventory(r io.Reader, maxItems int64, emit func(items []any) error) error {
	return m.streamInventory(r, maxItems, BatchSize, emit)
}

func (m *Manifest) streamInventory(r io.Reader, maxItems int64, size int, emit func([]any) error) error {
	cfg := &interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: m.Schema,
		CSVDelimiter: "COMMA", MaxItems: maxItems}
	src := &source{r: r}
	br := bufio.NewReaderSize(src, readBuffer)
	if head, _ := br.Peek(2); len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		err := stream(br, cfg, size, emit)
		if err != nil && src.err != nil {
			return src.err
		}
		return err
	}
	undecompressed := func(err error) error {
		if src.err != nil {
			return src.err // not the file's fault: it could not be read
		}
		return readerFailure("An inventory file could not be decompressed: %v", err)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return undecompressed(err)
	}
	data := &source{r: zr}
	var emitErr error
	err = stream(data, cfg, size, Watched(emit, &emitErr))
	if emitErr != nil {
		return emitErr
	}
	var tl *ItemTooLargeError
	if errors.As(err, &tl) {
		return err // what is left may run on as long
	}
	if data.err == nil {
		_, _ = io.Copy(io.Discard, data) // the rest must decompress too
	}
	if data.err != nil {
		return undecompressed(data.err)
	}
	return err
}
