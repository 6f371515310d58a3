package intrinsic

import (
	"testing"
)

func TestStringSplit(t *testing.T) {
	t.Parallel()
	const fn = "States.StringSplit"
	runEvalCases(t, []evalCase{
		{name: "NoDelimiter", expr: "States.StringSplit($, ',')", input: `" "`, want: `[" "]`},
		{name: "Simple", expr: "States.StringSplit($, ',')", input: `" , "`, want: `[" "," "]`},
		{name: "EmptyTokensDropped", expr: "States.StringSplit($, ',')", input: `", , ,"`, want: `[" "," "]`},
		{name: "EachCharacterIsADelimiter", expr: "States.StringSplit($, States.Format('T\n'))", input: `"split on T and \nnew line"`, want: `["split on "," and ","new line"]`},
		{name: "LiteralNewline", expr: "States.StringSplit('Hello\nWorld', '\n')", want: `["Hello","World"]`},
		{name: "CSV", expr: "States.StringSplit($, ',')", input: `"Value1,Value2,Value3\nValue4,Value5,Value6\n,,,\ntrue,1,'HelloWorld'\nNull,None,\n   \n"`,
			want: `["Value1","Value2","Value3\nValue4","Value5","Value6\n","\ntrue","1","'HelloWorld'\nNull","None","\n   \n"]`},
		{name: "DelimiterSet", expr: "States.StringSplit($, '.+,')", input: `"1+2,3.4"`, want: `["1","2","3","4"]`},
		{name: "NotASubstring", expr: "States.StringSplit($, 'ab')", input: `"1a2b3ab4"`, want: `["1","2","3","4"]`},
		{name: "LeadingAndTrailing", expr: "States.StringSplit($, ',')", input: `",a,b,"`, want: `["a","b"]`},
		{name: "OnlyDelimiters", expr: "States.StringSplit($, ',')", input: `","`, want: `[]`},
		{name: "Empty", expr: "States.StringSplit($, ',')", input: `""`, want: `[]`},
		{name: "EmptyDelimiter", expr: "States.StringSplit($, '')", input: `"abc"`, want: `["abc"]`},
		{name: "MultiByteDelimiter", expr: "States.StringSplit($, '✓')", input: `"a✓b✓✓c"`, want: `["a","b","c"]`},
		{name: "NestedFormat", expr: "States.StringSplit(States.Format('{}-{}', 'x', 'y'), '-')", want: `["x","y"]`},
		bad("NumberInput", "States.StringSplit($, ',')", `123`, fn),
		bad("NullInput", "States.StringSplit($, ',')", `null`, fn),
		bad("BooleanInput", "States.StringSplit($, ',')", `false`, fn),
		bad("NumberDelimiter", "States.StringSplit('a,b', 1)", ``, fn),
		bad("ArrayDelimiter", "States.StringSplit('a,b', $)", `[","]`, fn),
		bad("OneArgument", "States.StringSplit('a,b')", ``, fn),
		bad("NoArguments", "States.StringSplit()", ``, fn),
	})
}
