package intrinsic

import (
	"stepwise/jsonvalue"
)

// MaxArrayRange is the most elements States.ArrayRange may produce.
const MaxArrayRange = 1000

var arrayFunctions = []*function{
	{name: "States.Array", minArgs: 0, maxArgs: -1, eval: evalArray},
	{name: "States.ArrayPartition", minArgs: 2, maxArgs: 2, eval: evalArrayPartition},
	{name: "States.ArrayContains", minArgs: 2, maxArgs: 2, eval: evalArrayContains},
	{name: "States.ArrayRange", minArgs: 3, maxArgs: 3, eval: evalArrayRange},
	{name: "States.ArrayGetItem", minArgs: 2, maxArgs: 2, eval: evalArrayGetItem},
	{name: "States.ArrayLength", minArgs: 1, maxArgs: 1, eval: evalArrayLength},
	{name: "States.ArrayUnique", minArgs: 1, maxArgs: 1, eval: evalArrayUnique},
}

// evalArray returns its arguments as an array. The argument slice is fresh
// (and non-nil) for every evaluation, so it is the result.
func evalArray(_ *Call, args []any) (any, error) {
	return args, nil
}

// evalArrayPartition splits an array into chunks of the given size (the
// last one shorter). The size is truncated toward zero and must be positive.
func evalArrayPartition(c *Call, args []any) (any, error) {
	arr, ok := args[0].([]any)
	if !ok {
		return nil, invalidArgs(c)
	}
	size, ok := truncInt(args[1])
	if !ok || size <= 0 {
		return nil, invalidArgs(c)
	}
	n := int(size)
	out := make([]any, 0, (len(arr)+n-1)/n)
	for i := 0; i < len(arr); i += n {
		j := min(i+n, len(arr))
		out = append(out, arr[i:j:j]) // capped: appending never writes into arr
	}
	return out, nil
}

// evalArrayContains reports whether an element of the array prints like
// the value as a Java object: AWS compares String.valueOf renderings, so
// objects must list their members in the same order and true matches "true".
func evalArrayContains(c *Call, args []any) (any, error) {
	arr, ok := args[0].([]any)
	if !ok {
		return nil, invalidArgs(c)
	}
	target := appendJavaString(nil, args[1])
	var buf []byte
	for _, e := range arr {
		if s, ok := e.(string); ok {
			if s == string(target) {
				return true, nil
			}
			continue
		}
		buf = appendJavaString(buf[:0], e)
		if string(buf) == string(target) {
			return true, nil
		}
	}
	return false, nil
}

// evalArrayRange returns start, start+step, ... up to and including end.
// Arguments are truncated toward zero; the step must not be zero and the
// result may hold at most MaxArrayRange elements. A step pointing away from
// end gives an empty array.
func evalArrayRange(c *Call, args []any) (any, error) {
	start, ok1 := truncInt(args[0])
	end, ok2 := truncInt(args[1])
	step, ok3 := truncInt(args[2])
	if !ok1 || !ok2 || !ok3 || step == 0 {
		return nil, invalidArgs(c)
	}
	var count int64
	switch {
	case step > 0 && start <= end:
		count = (end-start)/step + 1
	case step < 0 && start >= end:
		count = (start-end)/(-step) + 1
	}
	if count > MaxArrayRange {
		return nil, invalidArgs(c)
	}
	out := make([]any, count)
	for i := range out {
		out[i] = jsonvalue.NumberFromInt(start + int64(i)*step)
	}
	return out, nil
}

// evalArrayGetItem returns the element at a zero-based index (truncated
// toward zero). AWS returns null for any index into an empty array and
// fails for an index outside a non-empty one.
func evalArrayGetItem(c *Call, args []any) (any, error) {
	arr, ok := args[0].([]any)
	if !ok {
		return nil, invalidArgs(c)
	}
	idx, ok := truncInt(args[1])
	if !ok {
		return nil, invalidArgs(c)
	}
	if len(arr) == 0 {
		return nil, nil
	}
	if idx < 0 || idx >= int64(len(arr)) {
		return nil, invalidArgs(c)
	}
	return arr[idx], nil
}

func evalArrayLength(c *Call, args []any) (any, error) {
	arr, ok := args[0].([]any)
	if !ok {
		return nil, invalidArgs(c)
	}
	return jsonvalue.NumberFromInt(int64(len(arr))), nil
}

// evalArrayUnique removes duplicates the way new HashSet<>(list) does:
// equality is Java's (1 and 1.0 differ, member order does not matter) and
// the result comes in the set's hash order, not the input order.
func evalArrayUnique(c *Call, args []any) (any, error) {
	arr, ok := args[0].([]any)
	if !ok {
		return nil, invalidArgs(c)
	}
	order := javaHashSetOrder(arr)
	out := make([]any, len(order))
	for i, j := range order {
		out[i] = arr[j]
	}
	return out, nil
}
