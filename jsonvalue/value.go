// Package jsonvalue is the JSON value model shared by every layer of
// Stepwise: an ordered object type, numbers that keep their literal form, a
// strict parser with a nesting limit built on the one JSON scanner (whose
// errors say what was wrong and where), a compact encoder, and semantic
// equality.
//
// # Values
//
// A value is one of:
//
//	nil        JSON null
//	bool       true / false
//	Number     a number, kept as its literal text ("1.0" stays "1.0")
//	string     a string
//	[]any      an array of values
//	*Object    an object whose members keep their insertion order
//
// # Immutability
//
// Values are never changed once they are shared: a state's input, a variable
// or a template literal may be referenced from many places at once. Code that
// needs a changed value builds a new one, cloning only along the changed path
// (Object.Clone is shallow for that reason).
//
// Objects keep their order because Step Functions does: the output of a
// state lists keys in the order they were written, and functions such as
// States.Format render objects member by member.
package jsonvalue

import (
	"iter"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Number is a JSON number in its literal form.
type Number string

// Float64 returns the number as a float64.
func (n Number) Float64() float64 {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		// Out of range literals parse to ±Inf with an error; keep the value.
		return f
	}
	return f
}

// Int64 returns the number as an int64 when it is an integer in range.
func (n Number) Int64() (int64, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f := n.Float64()
	if f == math.Trunc(f) && !math.IsInf(f, 0) && math.Abs(f) < 1<<63 {
		return int64(f), true
	}
	return 0, false
}

// IsInteger reports whether the number has no fractional part.
func (n Number) IsInteger() bool {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return true
	}
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt()
}

// Rat returns the exact value of the number.
func (n Number) Rat() *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return new(big.Rat)
	}
	return r
}

// NumberFromInt returns the Number for i.
func NumberFromInt(i int64) Number { return Number(strconv.FormatInt(i, 10)) }

// NumberFromFloat returns the shortest Number that reads back as f. Whole
// numbers are written without a fraction. NaN and infinities have no JSON
// form; they are written as null by the encoder.
func NumberFromFloat(f float64) Number {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// Object is a JSON object whose members keep their insertion order. The zero
// value is an empty object ready to use.
type Object struct {
	keys []string
	vals []any
	idx  map[string]int // built once the object grows past indexThreshold
}

const indexThreshold = 12

// NewObject returns an empty object with room for n members. A small
// object is allocated at once with its room.
func NewObject(n int) *Object {
	switch {
	case n <= 0:
		return &Object{}
	case n <= 2:
		b := new(struct {
			o Object
			k [2]string
			v [2]any
		})
		b.o.keys, b.o.vals = b.k[:0], b.v[:0]
		return &b.o
	case n <= 4:
		b := new(struct {
			o Object
			k [4]string
			v [4]any
		})
		b.o.keys, b.o.vals = b.k[:0], b.v[:0]
		return &b.o
	case n <= 8:
		b := new(struct {
			o Object
			k [8]string
			v [8]any
		})
		b.o.keys, b.o.vals = b.k[:0], b.v[:0]
		return &b.o
	}
	return &Object{keys: make([]string, 0, n), vals: make([]any, 0, n)}
}

// Len returns the number of members.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

func (o *Object) find(k string) int {
	if o == nil {
		return -1
	}
	if o.idx != nil {
		if i, ok := o.idx[k]; ok {
			return i
		}
		return -1
	}
	for i, key := range o.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// Get returns the value of member k.
func (o *Object) Get(k string) (any, bool) {
	i := o.find(k)
	if i < 0 {
		return nil, false
	}
	return o.vals[i], true
}

// Has reports whether member k exists.
func (o *Object) Has(k string) bool { return o.find(k) >= 0 }

// Set sets member k. An existing member keeps its position.
func (o *Object) Set(k string, v any) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	if o.idx != nil {
		o.idx[k] = len(o.keys) - 1
	} else if len(o.keys) > indexThreshold {
		o.idx = make(map[string]int, len(o.keys)*2)
		for i, key := range o.keys {
			o.idx[key] = i
		}
	}
}

// Delete removes member k, keeping the order of the others.
func (o *Object) Delete(k string) {
	i := o.find(k)
	if i < 0 {
		return
	}
	o.keys = append(o.keys[:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i], o.vals[i+1:]...)
	if o.idx != nil {
		delete(o.idx, k)
		for j := i; j < len(o.keys); j++ {
			o.idx[o.keys[j]] = j
		}
	}
}

// Keys returns the member names in order. The slice must not be modified.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// At returns the i-th member.
func (o *Object) At(i int) (string, any) { return o.keys[i], o.vals[i] }

// All iterates over the members in order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if o == nil {
			return
		}
		for i, k := range o.keys {
			if !yield(k, o.vals[i]) {
				return
			}
		}
	}
}

// Clone returns a shallow copy of the object.
func (o *Object) Clone() *Object {
	c := &Object{
		keys: append([]string(nil), o.Keys()...),
		vals: make([]any, o.Len()),
	}
	if o != nil {
		copy(c.vals, o.vals)
		if o.idx != nil {
			c.idx = make(map[string]int, len(o.idx))
			for k, i := range o.idx {
				c.idx[k] = i
			}
		}
	}
	return c
}

// DeepCopy returns a copy of v that shares no arrays or objects with it.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = DeepCopy(e)
		}
		return c
	case *Object:
		c := NewObject(t.Len())
		for k, e := range t.All() {
			c.keys = append(c.keys, k)
			c.vals = append(c.vals, DeepCopy(e))
		}
		if t.idx != nil {
			c.idx = make(map[string]int, len(t.idx))
			for k, i := range t.idx {
				c.idx[k] = i
			}
		}
		return c
	default:
		return v
	}
}

// TypeName names the JSON type of v the way error messages do.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *Object:
		return "object"
	default:
		return "unknown"
	}
}

// FromGo converts values built from Go literals (map[string]any, []any,
// int, float64, json.Number-like strings are NOT converted) into the model.
// Map keys are taken in sorted order. It is meant for tests and literals.
func FromGo(v any) any {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := NewObject(len(keys))
		for _, k := range keys {
			o.Set(k, FromGo(t[k]))
		}
		return o
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = FromGo(e)
		}
		return c
	case int:
		return NumberFromInt(int64(t))
	case int64:
		return NumberFromInt(t)
	case float64:
		return NumberFromFloat(t)
	default:
		return v
	}
}
