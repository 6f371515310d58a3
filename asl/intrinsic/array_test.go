package intrinsic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func TestArray(t *testing.T) {
	t.Parallel()
	runEvalCases(t, []evalCase{
		{name: "NoArguments", expr: "States.Array()", want: `[]`},
		{name: "Literals", expr: "States.Array('a', 'b', 'c')", want: `["a","b","c"]`},
		{name: "EmptyStrings", expr: "States.Array($, $)", input: `""`, want: `["",""]`},
		{name: "Nulls", expr: "States.Array($, $)", input: `null`, want: `[null,null]`},
		{name: "Numbers", expr: "States.Array($, $)", input: `1.1`, want: `[1.1,1.1]`},
		{name: "Objects", expr: "States.Array($, $)", input: `{"Arg1":1,"Arg2":[]}`, want: `[{"Arg1":1,"Arg2":[]},{"Arg1":1,"Arg2":[]}]`},
		{name: "MixedLiterals", expr: "States.Array(null, true, false, -0.5, 1e3)", want: `[null,true,false,-0.5,1e3]`},
		{name: "Nested", expr: "States.Array(States.Array(1), States.MathAdd(1, 2))", want: `[[1],3]`},
	})
}

func TestArrayPartition(t *testing.T) {
	t.Parallel()
	const fn = "States.ArrayPartition"
	runEvalCases(t, []evalCase{
		{name: "EmptyArray", expr: "States.ArrayPartition($, 1)", input: `[]`, want: `[]`},
		{name: "EmptyArrayLargeChunk", expr: "States.ArrayPartition($, 5)", input: `[]`, want: `[]`},
		{name: "Singletons", expr: "States.ArrayPartition($, 1)", input: `[0,1]`, want: `[[0],[1]]`},
		{name: "Exact", expr: "States.ArrayPartition($, 2)", input: `[0,1]`, want: `[[0,1]]`},
		{name: "ChunkLargerThanArray", expr: "States.ArrayPartition($, 5)", input: `[0]`, want: `[[0]]`},
		{name: "Remainder", expr: "States.ArrayPartition($, 2)", input: `[0,1,2]`, want: `[[0,1],[2]]`},
		{name: "RemainderOfOne", expr: "States.ArrayPartition($, 3)", input: `[0,1,2,3]`, want: `[[0,1,2],[3]]`},
		{name: "DocExample", expr: "States.ArrayPartition($, 4)", input: `[1,2,3,4,5,6,7,8,9]`, want: `[[1,2,3,4],[5,6,7,8],[9]]`},
		{name: "NestedArrays", expr: "States.ArrayPartition($, 2)", input: `[[1],[2],[3],[4]]`, want: `[[[1],[2]],[[3],[4]]]`},
		{name: "TruncatesChunk", expr: "States.ArrayPartition($, 2.6)", input: `[1,2,3,4,5]`, want: `[[1,2],[3,4],[5]]`},
		{name: "MaxIntChunk", expr: "States.ArrayPartition($, 2147483647)", input: `[1,2,3]`, want: `[[1,2,3]]`},
		{name: "FromNestedCall", expr: "States.ArrayPartition(States.Array(1,2,3,4,5), 2)", want: `[[1,2],[3,4],[5]]`},
		bad("ChunkTruncatedToZero", "States.ArrayPartition($, 0.6)", `[1,2,3]`, fn),
		bad("ZeroChunk", "States.ArrayPartition($, 0)", `[1,2,3]`, fn),
		bad("NegativeChunk", "States.ArrayPartition($, -1)", `[1,2,3]`, fn),
		bad("StringChunk", "States.ArrayPartition($, '2')", `[1,2,3]`, fn),
		bad("NullChunk", "States.ArrayPartition($, null)", `[1,2,3]`, fn),
		bad("NotAnArray", "States.ArrayPartition('not-array', 2)", ``, fn),
		bad("MissingChunk", "States.ArrayPartition($)", `[1,2,3]`, fn),
		bad("ExtraArgument", "States.ArrayPartition($, 2, 999)", `[1,2,3]`, fn),
	})
}

func TestArrayPartitionDoesNotAliasInput(t *testing.T) {
	t.Parallel()
	b := setup(t, `[1,2,3,4]`)
	got, err := b.eval(t, "States.ArrayPartition($, 2)")
	require.NoError(t, err)
	chunk := got.([]any)[0].([]any)
	_ = append(chunk, "x") // must not overwrite the input's third element
	require.Equal(t, `[1,2,3,4]`, jsonvalue.String(b.env.Input))
}

func TestArrayContains(t *testing.T) {
	t.Parallel()
	const fn = "States.ArrayContains"
	runEvalCases(t, []evalCase{
		{name: "EmptyArrayEmptyTarget", expr: "States.ArrayContains($, States.Array())", input: `[]`, want: `false`},
		{name: "EmptyArray", expr: "States.ArrayContains($, 1)", input: `[]`, want: `false`},
		{name: "NullAbsent", expr: "States.ArrayContains($, null)", input: `[[1,2,3],2]`, want: `false`},
		{name: "NestedArray", expr: "States.ArrayContains($, States.Array(1, 2, 3))", input: `[[1,2,3],2]`, want: `true`},
		{name: "ObjectVsArray", expr: "States.ArrayContains($, States.Array())", input: `[{"1":2,"2":[]}]`, want: `false`},
		{name: "Object", expr: `States.ArrayContains($, States.StringToJson('{"1": 2, "2": []}'))`, input: `[{"1":2,"2":[]}]`, want: `true`},
		{name: "Boolean", expr: "States.ArrayContains($, true)", input: `[true,false]`, want: `true`},
		{name: "Number", expr: "States.ArrayContains($, 2)", input: `[1,2,3]`, want: `true`},
		{name: "NumberAbsent", expr: "States.ArrayContains($, 5)", input: `[1,2,3]`, want: `false`},
		{name: "String", expr: "States.ArrayContains($, 'C')", input: `["A","B","C"]`, want: `true`},
		{name: "NullPresent", expr: "States.ArrayContains($, null)", input: `[1,null,3]`, want: `true`},
		// AWS compares Java renderings: member order matters, "true"
		// matches true, 1 does not match 1.0 and false does not match 0.
		{name: "MemberOrderMatters", expr: `States.ArrayContains($, States.StringToJson('{"b":2,"a":1}'))`, input: `[{"a":1,"b":2}]`, want: `false`},
		{name: "ExtraMember", expr: `States.ArrayContains($, States.StringToJson('{"a":1,"extra":null}'))`, input: `[{"a":1}]`, want: `false`},
		{name: "BooleanMatchesString", expr: "States.ArrayContains($, true)", input: `["true","false","maybe"]`, want: `true`},
		{name: "NumberMatchesString", expr: "States.ArrayContains($, 9007199254740991)", input: `["-1","9007199254740991"]`, want: `true`},
		{name: "FalseIsNotZero", expr: "States.ArrayContains($, false)", input: `[0,1,-1,-1.5]`, want: `false`},
		{name: "IntIsNotDouble", expr: "States.ArrayContains($, 1.0)", input: `[1]`, want: `false`},
		{name: "MixedBag", expr: "States.ArrayContains($, States.Array(0, 1, false))", input: `[null,""," ",0,1,true,false,[0,1,false]]`, want: `true`},
		bad("NotAnArray", "States.ArrayContains('not-array', 'x')", ``, fn),
		bad("MissingTarget", "States.ArrayContains($)", `[1,2,3]`, fn),
		bad("ExtraArgument", "States.ArrayContains($, 2, 999)", `[1,2,3]`, fn),
	})
}

func TestArrayRange(t *testing.T) {
	t.Parallel()
	const fn = "States.ArrayRange"
	runEvalCases(t, []evalCase{
		{name: "EndOnStep", expr: "States.ArrayRange(0, 9, 3)", want: `[0,3,6,9]`},
		{name: "EndBetweenSteps", expr: "States.ArrayRange(0, 10, 3)", want: `[0,3,6,9]`},
		{name: "StepPastEnd", expr: "States.ArrayRange(1, 9, 9)", want: `[1]`},
		{name: "DocExample", expr: "States.ArrayRange(1, 9, 2)", want: `[1,3,5,7,9]`},
		{name: "CrossesZero", expr: "States.ArrayRange(-2, 2, 2)", want: `[-2,0,2]`},
		{name: "Descending", expr: "States.ArrayRange(5, 1, -2)", want: `[5,3,1]`},
		{name: "EqualBounds", expr: "States.ArrayRange(3, 3, 1)", want: `[3]`},
		{name: "EqualBoundsNegativeStep", expr: "States.ArrayRange(3, 3, -1)", want: `[3]`},
		{name: "WrongDirection", expr: "States.ArrayRange(5, 1, 1)", want: `[]`},
		{name: "WrongDirectionNegative", expr: "States.ArrayRange(1, 5, -1)", want: `[]`},
		{name: "TruncatesArguments", expr: "States.ArrayRange(1.4, 5.6, 2.2)", want: `[1,3,5]`},
		{name: "TruncatesTowardZero", expr: "States.ArrayRange(1.6, 1.4, 1)", want: `[1]`},
		{name: "TruncatesNegative", expr: "States.ArrayRange(5.4, -0.6, -2.4)", want: `[5,3,1]`},
		{name: "FromNestedCalls", expr: "States.ArrayRange(States.MathAdd(0, 1), States.MathAdd(0, 5), 2)", want: `[1,3,5]`},
		{name: "FromInput", expr: "States.ArrayRange(0, States.ArrayLength($), 1)", input: `[1,2,3]`, want: `[0,1,2,3]`},
		bad("TooMany", "States.ArrayRange(1, 1001, 1)", ``, fn),
		bad("TooManyDescending", "States.ArrayRange(1001, 1, -1)", ``, fn),
		bad("ZeroStep", "States.ArrayRange(1, 10, 0)", ``, fn),
		bad("StepTruncatedToZero", "States.ArrayRange(1, 10, 0.49)", ``, fn),
		bad("StringStart", "States.ArrayRange('a', 5, 1)", ``, fn),
		bad("StringEnd", "States.ArrayRange(1, 'b', 1)", ``, fn),
		bad("NullStep", "States.ArrayRange(1, 5, null)", ``, fn),
		bad("OutsideInt", "States.ArrayRange(1, 3000000000, 1)", ``, fn),
		bad("MissingStep", "States.ArrayRange(1, 5)", ``, fn),
		bad("ExtraArgument", "States.ArrayRange(1, 5, 1, 99)", ``, fn),
	})
}

func TestArrayRangeLimits(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"States.ArrayRange(1, 1000, 1)", "States.ArrayRange(1000, 1, -1)"} {
		b := setup(t, "")
		got, err := b.eval(t, expr)
		require.NoError(t, err)
		require.Len(t, got, MaxArrayRange, expr)
	}
}

func TestArrayGetItem(t *testing.T) {
	t.Parallel()
	const fn = "States.ArrayGetItem"
	runEvalCases(t, []evalCase{
		{name: "Index", expr: "States.ArrayGetItem($, 5)", input: `[1,2,3,4,5,6,7,8,9]`, want: `6`},
		{name: "First", expr: "States.ArrayGetItem($, 0)", input: `["a","b","c"]`, want: `"a"`},
		{name: "Null", expr: "States.ArrayGetItem($, 0)", input: `[null]`, want: `null`},
		{name: "Object", expr: "States.ArrayGetItem($, 1)", input: `[{"a":1},{"b":2}]`, want: `{"b":2}`},
		{name: "NestedCall", expr: "States.ArrayGetItem(States.Array('x', 'y', 'z'), 1)", want: `"y"`},
		{name: "TruncatesIndex", expr: "States.ArrayGetItem($, 1.2)", input: `[10,20,30]`, want: `20`},
		{name: "EmptyArrayIsNull", expr: "States.ArrayGetItem($, 999)", input: `[]`, want: `null`},
		{name: "SplitAndPick", expr: "States.ArrayGetItem(States.StringSplit($, '-'), 0)", input: `"machine-name-1"`, want: `"machine"`},
		bad("NotAnArray", "States.ArrayGetItem('not-array', 0)", ``, fn),
		bad("IndexEqualsLength", "States.ArrayGetItem($, 3)", `[10,20,30]`, fn),
		bad("NegativeIndex", "States.ArrayGetItem($, -1)", `[10,20,30]`, fn),
		bad("StringIndex", "States.ArrayGetItem($, '1')", `[10,20,30]`, fn),
		bad("MissingIndex", "States.ArrayGetItem($)", `[10,20,30]`, fn),
		bad("ExtraArgument", "States.ArrayGetItem($, 1, 999)", `[10,20,30]`, fn),
	})
}

func TestArrayLength(t *testing.T) {
	t.Parallel()
	const fn = "States.ArrayLength"
	runEvalCases(t, []evalCase{
		{name: "Length", expr: "States.ArrayLength($)", input: `[1,2,3,4,5,6,7,8,9]`, want: `9`},
		{name: "Empty", expr: "States.ArrayLength($)", input: `[]`, want: `0`},
		bad("NotAnArray", "States.ArrayLength($)", `{"a":1}`, fn),
		bad("NestedNotAnArray", "States.ArrayLength(States.JsonToString($))", `[1,2,3]`, fn),
		bad("NoArguments", "States.ArrayLength()", ``, fn),
	})
}

func TestArrayUnique(t *testing.T) {
	t.Parallel()
	const fn = "States.ArrayUnique"
	// Orders are those of java.util.HashSet, checked against a JVM.
	runEvalCases(t, []evalCase{
		{name: "Numbers", expr: "States.ArrayUnique($)", input: `[1,2,3,3,3,4]`, want: `[1,2,3,4]`},
		{name: "Strings", expr: "States.ArrayUnique($)", input: `["a","b","a","c","b"]`, want: `["a","b","c"]`},
		{name: "Empty", expr: "States.ArrayUnique($)", input: `[]`, want: `[]`},
		{name: "BooleansInHashOrder", expr: "States.ArrayUnique($)", input: `[true,false,true,false]`, want: `[false,true]`},
		{name: "NullFirst", expr: "States.ArrayUnique($)", input: `[null,null,1,null]`, want: `[null,1]`},
		{name: "NestedArraysInHashOrder", expr: "States.ArrayUnique($)", input: `[[1,2],[1,2],[2,1]]`, want: `[[2,1],[1,2]]`},
		{name: "MemberOrderIgnored", expr: "States.ArrayUnique($)", input: `[{"a":1,"b":2},{"b":2,"a":1}]`, want: `[{"a":1,"b":2}]`},
		{name: "NumberVsString", expr: "States.ArrayUnique($)", input: `[1,"1",1,"01"]`, want: `[1,"1","01"]`},
		{name: "IntVsDouble", expr: "States.ArrayUnique($)", input: `[1.0,1,-0.0,0.0,2147483648,123456789012345678901234567890,"é","🚀"]`,
			want: `[1.0,-0.0,0.0,2147483648,1,123456789012345678901234567890,"🚀","é"]`},
		{name: "Mixed", expr: "States.ArrayUnique($)",
			input: `[null,null,true,true,false,false,1,1,1.1,0,-0,"HelloWorld","HelloWorld",[],[],[null],[null],{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":1}]`,
			want:  `[null,0,{"a":1,"b":2},1,[],{"a":1,"b":1},1.1,true,"HelloWorld",false,[null]]`},
		{name: "NestedCall", expr: "States.ArrayUnique(States.Array(1,1,2,2,3))", want: `[1,2,3]`},
		bad("NotAnArray", "States.ArrayUnique('not-array')", ``, fn),
		bad("Object", "States.ArrayUnique($)", `{"a":1}`, fn),
	})
}

func TestArrayUniqueLarge(t *testing.T) {
	t.Parallel()
	// 40 distinct strings: HashSet sizes its table for the input (64 slots).
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 40 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(jsonString(string(rune('a'+i%26)) + string(rune('A'+i/26))))
	}
	sb.WriteByte(']')
	b := setup(t, sb.String())
	got, err := b.eval(t, "States.ArrayUnique($)")
	require.NoError(t, err)
	require.Len(t, got, 40)
}
