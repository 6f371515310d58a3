package integration

import (
	"context"
	"errors"
	"strings"

	"stepwise/engine"
	"stepwise/integration/itemreader"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// The resources of an ItemReader, and the SDK actions that read them.
const (
	readerGetObject     = "arn:aws:states:::s3:getObject"
	readerListObjectsV2 = "arn:aws:states:::s3:listObjectsV2"
)

// readItems carries out a Map state's ItemReader through the S3 client of
// the aws-sdk integration (any S3-compatible endpoint): getObject reads
// and parses an object, listObjectsV2 lists the objects under a prefix
// (each listed object an item).
func (r *Registry) readItems(ctx context.Context, t *engine.Task, done func(engine.TaskResult)) {
	go func() {
		items, err := r.read(context.WithoutCancel(ctx), t)
		if err != nil {
			var fl *stepwisetype.Failure
			if !errors.As(err, &fl) {
				fl = stepwisetype.Failuref(stepwisetype.ErrorItemReaderFailed, "%v", err)
			}
			done(engine.TaskResult{Failure: fl})
			return
		}
		done(engine.TaskResult{Output: items})
	}()
}

func (r *Registry) read(ctx context.Context, t *engine.Task) ([]any, error) {
	cfg := t.Request.Reader
	call := func(action string, params any) (*jsonvalue.Object, error) {
		e := r.lookup("arn:aws:states:::aws-sdk:s3:" + action)
		if e == nil {
			return nil, stepwisetype.Failuref(stepwisetype.ErrorItemReaderFailed, "No S3 client is configured to read items.")
		}
		out, err := e.impl.Call(ctx, &Request{Resource: "arn:aws:states:::aws-sdk:s3:" + action, Service: "s3", Action: action,
			Pattern: RequestResponse, Parameters: params, ExecutionArn: t.ExecutionArn, TaskID: t.ID})
		if err != nil {
			return nil, err
		}
		obj, _ := out.(*jsonvalue.Object)
		if obj == nil {
			obj = jsonvalue.NewObject(0)
		}
		return obj, nil
	}
	// Any partition's ARN (arn:aws-cn:..., as the definition's check
	// allows) names the same reader.
	resource := t.Request.Resource
	if i := strings.Index(resource, ":states:::"); i >= 0 {
		resource = "arn:aws" + resource[i:]
	}
	switch resource {
	case readerGetObject:
		out, err := call("getObject", t.Request.Parameters)
		if err != nil {
			return nil, err
		}
		body, _ := out.Get("Body")
		text, _ := body.(string)
		if cfg.InputType == "MANIFEST" {
			return readInventory(call, []byte(text), cfg.MaxItems)
		}
		return itemreader.Parse([]byte(text), cfg)
	case readerListObjectsV2:
		params, _ := t.Request.Parameters.(*jsonvalue.Object)
		var items []any
		for {
			out, err := call("listObjectsV2", params)
			if err != nil {
				return nil, err
			}
			contents, _ := out.Get("Contents")
			list, _ := contents.([]any)
			items = append(items, list...)
			if cfg.MaxItems > 0 && int64(len(items)) >= cfg.MaxItems {
				return items[:cfg.MaxItems], nil
			}
			next, _ := out.Get("NextContinuationToken")
			tok, _ := next.(string)
			if tok == "" {
				if items == nil {
					items = []any{}
				}
				return items, nil
			}
			p := jsonvalue.NewObject(0)
			if params != nil {
				p = params.Clone()
			}
			p.Set("ContinuationToken", tok)
			params = p
		}
	}
	return nil, stepwisetype.Failuref(stepwisetype.ErrorItemReaderFailed, "The resource '%s' cannot read items.", t.Request.Resource)
}

// readInventory reads the items of an S3 inventory from its manifest:
// every line of every data file the manifest names, in order.
func readInventory(call func(string, any) (*jsonvalue.Object, error), manifest []byte, maxItems int64) ([]any, error) {
	m, err := itemreader.ParseManifest(manifest)
	if err != nil {
		return nil, err
	}
	items := []any{}
	for _, key := range m.Keys {
		params := jsonvalue.NewObject(2)
		params.Set("Bucket", m.Bucket)
		params.Set("Key", key)
		out, err := call("getObject", params)
		if err != nil {
			return nil, err
		}
		body, _ := out.Get("Body")
		text, _ := body.(string)
		left := int64(0)
		if maxItems > 0 {
			left = maxItems - int64(len(items))
		}
		more, err := m.ParseInventory([]byte(text), left)
		if err != nil {
			return nil, err
		}
		items = append(items, more...)
		if maxItems > 0 && int64(len(items)) >= maxItems {
			return items[:maxItems], nil
		}
	}
	return items, nil
}
