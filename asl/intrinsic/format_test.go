package intrinsic

import (
	"testing"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	const fn = "States.Format"
	badTemplate := func(name, expr, msg string) evalCase {
		return evalCase{name: name, expr: expr,
			cause: "There was an error while evaluating the intrinsic function: " + expr + ". Invalid template in States.Format: " + msg}
	}
	runEvalCases(t, []evalCase{
		{name: "EmptyString", expr: "States.Format('Formatting argument {}.', $)", input: `""`, want: `"Formatting argument ."`},
		{name: "Space", expr: "States.Format('Formatting argument {}.', $)", input: `" "`, want: `"Formatting argument  ."`},
		{name: "String", expr: "States.Format('Formatting argument {}.', $)", input: `"HelloWorld"`, want: `"Formatting argument HelloWorld."`},
		{name: "Null", expr: "States.Format('fst={} and snd={}.', $, $)", input: `null`, want: `"fst=null and snd=null."`},
		{name: "Integer", expr: "States.Format('Formatting argument {}.', $)", input: `1`, want: `"Formatting argument 1."`},
		{name: "Decimal", expr: "States.Format('Formatting argument {}.', $)", input: `1.1`, want: `"Formatting argument 1.1."`},
		{name: "JSONText", expr: "States.Format('Formatting argument {}.', $)", input: `"{\"Arg1\": 1, \"Arg2\": []}"`, want: `"Formatting argument {\"Arg1\": 1, \"Arg2\": []}."`},
		{name: "Object", expr: "States.Format('fst={} and snd={}.', $, $)", input: `{"Arg1":1,"Arg2":[]}`, want: `"fst={Arg1=1, Arg2=[]} and snd={Arg1=1, Arg2=[]}."`},
		{name: "Array", expr: "States.Format('{}', $)", input: `[1,"a",null,true,{"k":[2.5]}]`, want: `"[1, a, null, true, {k=[2.5]}]"`},
		{name: "Booleans", expr: "States.Format('{} {} {}', 'x', 2, true)", want: `"x 2 true"`},
		// Numbers print as the Java Integer, Long or Double they become.
		{name: "DoubleWithZeroFraction", expr: "States.Format('{}', 1.0)", want: `"1.0"`},
		{name: "Exponent", expr: "States.Format('{}', 1E2)", want: `"100.0"`},
		{name: "LargeDouble", expr: "States.Format('{}', 12345678.9)", want: `"1.23456789E7"`},
		{name: "SmallDouble", expr: "States.Format('{}', 0.0001)", want: `"1.0E-4"`},
		{name: "Long", expr: "States.Format('{}', 9007199254740991)", want: `"9007199254740991"`},
		{name: "BigInteger", expr: "States.Format('{}', 123456789012345678901234567890)", want: `"123456789012345678901234567890"`},
		{name: "NegativeZero", expr: "States.Format('{}', -0)", want: `"0"`},
		{name: "NoPlaceholders", expr: "States.Format('no placeholders')", want: `"no placeholders"`},
		{name: "Whitespace", expr: "States.Format('  {}  ', 'x')", want: `"  x  "`},
		{name: "EscapedQuotes", expr: `States.Format('Name: \'{}\', Surname: "{}"', 'Gabriel', 'Moreira')`, want: `"Name: 'Gabriel', Surname: \"Moreira\""`},
		{name: "EscapedBraces", expr: `States.Format('\{{}\}', 'x')`, want: `"{x}"`},
		{name: "EscapedBackslash", expr: `States.Format('a\\b{}', 'c')`, want: `"a\\bc"`},
		{name: "TemplateFromInput", expr: "States.Format($, 'Ada')", input: `"Hello, my name is {}."`, want: `"Hello, my name is Ada."`},
		{name: "EscapesInInputTemplate", expr: "States.Format($, 'x')", input: `"\\{{}\\}"`, want: `"{x}"`},
		{name: "NestedJsonToString", expr: "States.Format('arn:{}:{}', 'lambda', States.JsonToString($))", input: `{"k":1}`, want: `"arn:lambda:{\"k\":1}"`},
		{name: "FailStateCause", expr: "States.Format('This is a custom error message for {}, caused by {}.', 'error string', 'cause string')",
			want: `"This is a custom error message for error string, caused by cause string."`},
		badTemplate("UnclosedBrace", "States.Format('Hello {', $)", "matching '}' not found for '{'."),
		badTemplate("DoubledBraces", "States.Format('Hello {{}}', $)", "matching '}' not found for '{'."),
		badTemplate("LoneClosingBrace", "States.Format('}')", "matching '{' not found for '}'."),
		func() evalCase {
			c := badTemplate("BraceAtEndOfInputTemplate", "States.Format($, 1)", "matching '}' not found for '{'.")
			c.input = `"a{"`
			return c
		}(),
		bad("TooFewArguments", "States.Format('{} {}', 'x')", ``, fn),
		bad("TooManyArguments", "States.Format('{}', 'x', 'y')", ``, fn),
		bad("NumberTemplate", "States.Format($, 'Ada')", `123`, fn),
		bad("NoArguments", "States.Format()", ``, fn),
	})
}
