// Package sdkjob holds what the optimized integrations of long-running
// jobs (ECS, Batch, Glue) share: reading a Task's Parameters into an AWS
// SDK for Go request, rendering SDK values as AWS renders them, and
// polling a job with back-off until it ends.
package sdkjob

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/aws/smithy-go/middleware"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
)

// DecodeParams fills in, an AWS SDK for Go request, from a Task state's
// Parameters: the request's members in PascalCase, as the optimized
// integrations take them. Members the request does not have, and values
// of the wrong type, fail the task as AWS words it.
func DecodeParams(params any, in any) error {
	if params == nil {
		params = jsonvalue.NewObject(0)
	}
	if _, ok := params.(*jsonvalue.Object); !ok {
		return ParamsFailure("The Parameters must be an object, not %s", jsonvalue.TypeName(params))
	}
	dec := json.NewDecoder(bytes.NewReader(jsonvalue.Marshal(params)))
	dec.DisallowUnknownFields()
	err := dec.Decode(in)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return ParamsFailure("The value of the field '%s' must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return ParamsFailure("The field '%s' is not supported by Step Functions", name)
	}
	return ParamsFailure("%v", err)
}

func ParamsFailure(format string, args ...any) error {
	return failure.Newf(failure.TaskFailed,
		"The Parameters could not be used to start the Task: ["+format+"]", args...)
}

// jsonKind names the JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// Encoder renders AWS SDK for Go values as the optimized integrations
// render the AWS SDK for Java's (v1): members in PascalCase and in
// alphabetical order, unset members left out, timestamps as epoch
// milliseconds. With EmptyLists, unset lists are [], as the Java SDK's
// models of some services (ECS) make them.
type Encoder struct {
	EmptyLists bool
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	metadataType = reflect.TypeFor[middleware.Metadata]()
)

// Object renders a struct (or a pointer to one).
func (e Encoder) Object(v any) *jsonvalue.Object {
	return e.structValue(reflect.Indirect(reflect.ValueOf(v)))
}

func (e Encoder) structValue(v reflect.Value) *jsonvalue.Object {
	t := v.Type()
	fields := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type == metadataType {
			continue
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.String && fv.String() == "" {
			continue // an enum left unset
		}
		if x, ok := e.value(fv); ok {
			fields[f.Name] = x
		}
	}
	return sortedObject(fields)
}

// value renders one value; ok is false for an unset one.
func (e Encoder) value(v reflect.Value) (any, bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, false
		}
		return e.value(v.Elem())
	case reflect.Struct:
		if v.Type() == timeType {
			return jsonvalue.NumberFromInt(v.Interface().(time.Time).UnixMilli()), true
		}
		return e.structValue(v), true
	case reflect.Slice:
		return e.slice(v)
	case reflect.Map:
		return e.mapValue(v)
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return jsonvalue.NumberFromInt(v.Int()), true
	case reflect.Float32, reflect.Float64:
		return jsonvalue.NumberFromFloat(v.Float()), true
	}
	return nil, false // unions and documents: the Java SDK v1 has none
}

func (e Encoder) slice(v reflect.Value) (any, bool) {
	if v.IsNil() && !e.EmptyLists {
		return nil, false
	}
	if v.Type().Elem().Kind() == reflect.Uint8 {
		return base64.StdEncoding.EncodeToString(v.Bytes()), true
	}
	list := make([]any, 0, v.Len())
	for i := range v.Len() {
		x, _ := e.value(v.Index(i))
		list = append(list, x)
	}
	return list, true
}

func (e Encoder) mapValue(v reflect.Value) (any, bool) {
	if v.IsNil() {
		return nil, false
	}
	entries := make(map[string]any, v.Len())
	for it := v.MapRange(); it.Next(); {
		x, _ := e.value(it.Value())
		entries[fmt.Sprint(it.Key().Interface())] = x
	}
	return sortedObject(entries), true
}

// WithMetadata adds the SDK's HTTP metadata to a rendered response, as
// request-response results carry it, keeping the members in order.
func WithMetadata(obj *jsonvalue.Object, md middleware.Metadata) *jsonvalue.Object {
	integration.SdkMetadata(obj, md)
	members := make(map[string]any, obj.Len())
	for k, v := range obj.All() {
		members[k] = v
	}
	return sortedObject(members)
}

func sortedObject(m map[string]any) *jsonvalue.Object {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	obj := jsonvalue.NewObject(len(keys))
	for _, k := range keys {
		obj.Set(k, m[k])
	}
	return obj
}
