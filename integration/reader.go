package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration/itemreader"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// The resources of an ItemReader, and the SDK actions that read them.
const (
	readerGetObject     = "arn:aws:states:::s3:getObject"
	readerListObjectsV2 = "arn:aws:states:::s3:listObjectsV2"
)

// PayloadOpener is an Integration that can hand over the payload of an
// action's answer (S3 GetObject's Body) as it arrives, for the caller to
// read and close, instead of holding all of it in Call's result. It fails
// as Call fails; reading the payload fails with the failure Call meets
// when it cannot read an answer.
type PayloadOpener interface {
	OpenPayload(ctx context.Context, r *Request) (io.ReadCloser, error)
}

var _ task.ItemStreamer = (*Registry)(nil)

// noS3Reader is the failure of an ItemReader without an S3 client.
func noS3Reader() *failure.Failure {
	return failure.New(failure.ItemReaderFailed, "No S3 client is configured to read items.")
}

// readItems carries out a Map state's ItemReader through the S3 client of
// the aws-sdk integration (any S3-compatible endpoint): getObject reads
// and parses an object, listObjectsV2 lists the objects under a prefix
// (each listed object an item). The answer is all the items: StreamItems
// hands them over a batch at a time instead.
func (r *Registry) readItems(ctx context.Context, t *task.Task, done func(task.Result)) {
	go func() {
		items, err := r.read(context.WithoutCancel(ctx), t)
		if err != nil {
			var fl *failure.Failure
			if !errors.As(err, &fl) {
				fl = failure.Newf(failure.ItemReaderFailed, "%v", err)
			}
			done(task.Result{Failure: fl})
			return
		}
		done(task.Result{Output: items})
	}()
}

// read is all the items an ItemReader streams.
func (r *Registry) read(ctx context.Context, t *task.Task) ([]any, error) {
	return itemreader.Collect(func(emit func([]any) error) error { return r.streamItems(ctx, t, emit) })
}

// StreamItems carries out a Map state's ItemReader as readItems does,
// handing its items to emit in order, at most itemreader.BatchSize at a
// time, as they are read: an object is read as it arrives, never held
// (a listing, a page at a time). It fails with the *failure.Failure
// readItems answers with; emit's error, and the context's once ctx is
// done, are returned as they are. Items may have been handed over before
// a failure.
func (r *Registry) StreamItems(ctx context.Context, t *task.Task, emit func(items []any) error) error {
	var emitErr error
	err := r.streamItems(ctx, t, itemreader.Watched(emit, &emitErr))
	switch {
	case err == nil:
		return nil
	case emitErr != nil:
		return emitErr
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	}
	var fl *failure.Failure
	if !errors.As(err, &fl) {
		fl = failure.Newf(failure.ItemReaderFailed, "%v", err)
	}
	return fl
}

func (r *Registry) streamItems(ctx context.Context, t *task.Task, emit func([]any) error) error {
	cfg := t.Request.Reader
	if cfg == nil {
		cfg = &interp.ReaderConfig{}
	}
	switch inAWSPartition(t.Request.Resource) {
	case readerGetObject:
		body, err := r.openObject(ctx, t, t.Request.Parameters)
		if err != nil {
			return err
		}
		defer body.Close()
		name := objectName(t.Request.Parameters)
		if cfg.ManifestType == "ATHENA_DATA" {
			return r.streamAthena(ctx, t, body, name, cfg, emit)
		}
		if cfg.InputType == "MANIFEST" || cfg.ManifestType == "S3_INVENTORY" {
			// (An S3 inventory's manifest.json, whether or not InputType
			// says MANIFEST too.)
			return r.streamInventory(ctx, t, body, name, cfg.MaxItems, emit)
		}
		return inObject(itemreader.Stream(body, cfg, emit), name)
	case readerListObjectsV2:
		params, _ := t.Request.Parameters.(*jsonvalue.Object)
		if cfg.Transformation == "LOAD_AND_FLATTEN" {
			return r.streamFlattened(ctx, t, params, cfg, emit)
		}
		var n int64
		for {
			out, err := r.callS3(ctx, t, "listObjectsV2", params)
			if err != nil {
				return err
			}
			contents, _ := out.Get("Contents")
			list, _ := contents.([]any)
			if cfg.MaxItems > 0 && int64(len(list)) > cfg.MaxItems-n {
				list = list[:cfg.MaxItems-n]
			}
			for len(list) > 0 {
				k := min(len(list), itemreader.BatchSize)
				if err := emit(list[:k:k]); err != nil {
					return err
				}
				list, n = list[k:], n+int64(k)
			}
			if cfg.MaxItems > 0 && n >= cfg.MaxItems {
				return nil
			}
			next, _ := out.Get("NextContinuationToken")
			tok, _ := next.(string)
			if tok == "" {
				return nil
			}
			p := jsonvalue.NewObject(0)
			if params != nil {
				p = params.Clone()
			}
			p.Set("ContinuationToken", tok)
			params = p
		}
	}
	return failure.Newf(failure.ItemReaderFailed, "The resource '%s' cannot read items.", t.Request.Resource)
}

// inAWSPartition is a resource of the states service in the aws
// partition: any partition's ARN (arn:aws-cn:..., as the definition's
// check allows) names the same reader or writer.
func inAWSPartition(resource string) string {
	if i := strings.Index(resource, ":states:::"); i >= 0 {
		return "arn:aws" + resource[i:]
	}
	return resource
}

// s3Client is the integration that makes an S3 call for an ItemReader
// or a ResultWriter, and its request; without one, the task fails with
// missing.
func (r *Registry) s3Client(t *task.Task, action string, params any, missing *failure.Failure) (Integration, *Request, error) {
	resource := "arn:aws:states:::aws-sdk:s3:" + action
	e := r.lookup(resource)
	if e == nil {
		return nil, nil, missing
	}
	return e.impl, &Request{Resource: resource, Service: "s3", Action: action, Pattern: RequestResponse,
		Parameters: params, ExecutionArn: t.ExecutionArn, TaskID: t.ID}, nil
}

// callS3 makes an S3 call and returns its result.
func (r *Registry) callS3(ctx context.Context, t *task.Task, action string, params any) (*jsonvalue.Object, error) {
	impl, req, err := r.s3Client(t, action, params, noS3Reader())
	if err != nil {
		return nil, err
	}
	out, err := impl.Call(ctx, req)
	if err != nil {
		return nil, err
	}
	obj, _ := out.(*jsonvalue.Object)
	if obj == nil {
		obj = jsonvalue.NewObject(0)
	}
	return obj, nil
}

// openObject opens the body of an S3 object (getObject with params) to
// read as it arrives, where the S3 client can hand it over so; else it is
// the Body of getObject's result.
func (r *Registry) openObject(ctx context.Context, t *task.Task, params any) (io.ReadCloser, error) {
	const action = "getObject"
	impl, req, err := r.s3Client(t, action, params, noS3Reader())
	if err != nil {
		return nil, err
	}
	if o, ok := impl.(PayloadOpener); ok {
		return o.OpenPayload(ctx, req)
	}
	out, err := impl.Call(ctx, req)
	if err != nil {
		return nil, err
	}
	obj, _ := out.(*jsonvalue.Object)
	if obj == nil {
		obj = jsonvalue.NewObject(0)
	}
	body, _ := obj.Get("Body")
	text, _ := body.(string)
	return io.NopCloser(strings.NewReader(text)), nil
}

// MaxManifestSize bounds a manifest (an S3 inventory's manifest.json, an
// Athena data manifest): it is read whole, at most this much.
const MaxManifestSize = 16 << 20

// readManifest reads the manifest object name (s3://bucket/key) whole, at
// most MaxManifestSize.
func readManifest(manifest io.Reader, name string) ([]byte, error) {
	text, err := io.ReadAll(io.LimitReader(manifest, MaxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(text) > MaxManifestSize {
		return nil, failure.Newf(failure.ItemReaderFailed, "The manifest %s is larger than %d MiB, the most read of a manifest.", name, MaxManifestSize>>20)
	}
	return text, nil
}

// objectName is s3://bucket/key of getObject's parameters.
func objectName(params any) string {
	p, _ := params.(*jsonvalue.Object)
	if p == nil {
		return "s3://"
	}
	b, _ := p.Get("Bucket")
	k, _ := p.Get("Key")
	return fmt.Sprintf("s3://%v/%v", b, k)
}

// inObject is err, an item too large named in the object name
// (s3://bucket/key) it is in.
func inObject(err error, name string) error {
	var tl *itemreader.ItemTooLargeError
	if errors.As(err, &tl) {
		return tl.Failure(name)
	}
	return err
}

// streamInventory reads the items of an S3 inventory from its manifest
// (the object name): every line of every data file the manifest names, in
// order, each file read as it arrives.
func (r *Registry) streamInventory(ctx context.Context, t *task.Task, manifest io.Reader, name string, maxItems int64, emit func([]any) error) error {
	text, err := readManifest(manifest, name)
	if err != nil {
		return err
	}
	m, err := itemreader.ParseManifest(text)
	if err != nil {
		return err
	}
	var n int64
	counted := func(items []any) error {
		n += int64(len(items))
		return emit(items)
	}
	for _, key := range m.Keys {
		params := jsonvalue.NewObject(2)
		params.Set("Bucket", m.Bucket)
		params.Set("Key", key)
		body, err := r.openObject(ctx, t, params)
		if err != nil {
			return err
		}
		left := int64(0)
		if maxItems > 0 {
			left = maxItems - n
		}
		err = m.StreamInventory(body, left, counted)
		body.Close()
		if err != nil {
			return inObject(err, objectName(params))
		}
		if maxItems > 0 && n >= maxItems {
			return nil
		}
	}
	return nil
}

// streamAthena reads the items of an Athena data manifest: the rows of
// every data file it names, in order, each read as it arrives as cfg's
// InputType says, MaxItems across them all.
func (r *Registry) streamAthena(ctx context.Context, t *task.Task, manifest io.Reader, name string, cfg *interp.ReaderConfig, emit func([]any) error) error {
	if err := itemreader.CheckAthena(cfg); err != nil {
		return err
	}
	text, err := readManifest(manifest, name)
	if err != nil {
		return err
	}
	files, err := itemreader.ParseAthenaManifest(text)
	if err != nil {
		return err
	}
	m := &multiRead{cfg: cfg, emit: emit}
	for _, f := range files {
		body, err := r.openObject(ctx, t, objectParams(f.Bucket, f.Key))
		var fl *failure.Failure
		if errors.As(err, &fl) && fl.Name != failure.ItemReaderFailed {
			// The data file's failure (NoSuchKey, AccessDenied) is the read's.
			return failure.Newf(failure.ItemReaderFailed, "The Athena data manifest names s3://%s/%s, which could not be read: %s: %s",
				f.Bucket, f.Key, fl.Name, fl.Cause)
		}
		if err != nil {
			return err
		}
		fileCfg := *cfg
		fileCfg.ManifestType = ""
		if done, err := m.object(body, "s3://"+f.Bucket+"/"+f.Key, fileCfg, itemreader.StreamAthenaFile); done || err != nil {
			return err
		}
	}
	return nil
}

// multiRead reads the items of several objects in turn, MaxItems across
// them all.
type multiRead struct {
	cfg  *interp.ReaderConfig
	emit func([]any) error
	n    int64 // items emitted so far
}

// object reads one object's items (the object name, s3://bucket/key) with
// read, under fileCfg with what is left of MaxItems, and closes it; done
// once MaxItems is reached.
func (m *multiRead) object(body io.ReadCloser, name string, fileCfg interp.ReaderConfig, read func(io.Reader, *interp.ReaderConfig, func([]any) error) error) (done bool, err error) {
	defer body.Close()
	if m.cfg.MaxItems > 0 {
		fileCfg.MaxItems = m.cfg.MaxItems - m.n
	}
	err = read(body, &fileCfg, func(items []any) error {
		m.n += int64(len(items))
		return m.emit(items)
	})
	return err == nil && m.cfg.MaxItems > 0 && m.n >= m.cfg.MaxItems, inObject(err, name)
}

// objectParams are getObject's parameters for one object.
func objectParams(bucket any, key string) *jsonvalue.Object {
	params := jsonvalue.NewObject(2)
	params.Set("Bucket", bucket)
	params.Set("Key", key)
	return params
}

// streamFlattened reads the objects a listing names (Transformation
// LOAD_AND_FLATTEN): page after page, each object's items as cfg's
// InputType says, in the listing's order, MaxItems across them all. A
// key ending in "/" (a folder's marker) is no object of data.
func (r *Registry) streamFlattened(ctx context.Context, t *task.Task, params *jsonvalue.Object, cfg *interp.ReaderConfig, emit func([]any) error) error {
	if params == nil {
		params = jsonvalue.NewObject(0)
	}
	bucket, _ := params.Get("Bucket")
	m := &multiRead{cfg: cfg, emit: emit}
	for {
		out, err := r.callS3(ctx, t, "listObjectsV2", params)
		if err != nil {
			return err
		}
		contents, _ := out.Get("Contents")
		list, _ := contents.([]any)
		for _, o := range list {
			obj, _ := o.(*jsonvalue.Object)
			k, _ := obj.Get("Key")
			key, _ := k.(string)
			if key == "" || strings.HasSuffix(key, "/") {
				continue
			}
			body, err := r.openObject(ctx, t, objectParams(bucket, key))
			if err != nil {
				return err
			}
			fileCfg := *cfg
			fileCfg.Transformation = ""
			if done, err := m.object(body, fmt.Sprintf("s3://%v/%s", bucket, key), fileCfg, itemreader.Stream); done || err != nil {
				return err
			}
		}
		next, _ := out.Get("NextContinuationToken")
		tok, _ := next.(string)
		if tok == "" {
			return nil
		}
		p := params.Clone()
		p.Set("ContinuationToken", tok)
		params = p
	}
}
