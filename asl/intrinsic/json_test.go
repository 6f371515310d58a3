package intrinsic

import (
	"testing"
)

const jacksonSource = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); "

func cannotConvert(expr, detail string) string {
	return "There was an error while evaluating the intrinsic function: " + expr +
		". Cannot convert String to Json in States.StringToJson, caused by: " + detail
}

func TestStringToJson(t *testing.T) {
	t.Parallel()
	const fn = "States.StringToJson"
	runEvalCases(t, []evalCase{
		{name: "Empty", expr: "States.StringToJson($)", input: `""`, want: `null`},
		{name: "Blank", expr: "States.StringToJson($)", input: `" \n\t"`, want: `null`},
		{name: "Null", expr: "States.StringToJson($)", input: `"null"`, want: `null`},
		{name: "Number", expr: "States.StringToJson($)", input: `"1.1"`, want: `1.1`},
		{name: "NegativeZero", expr: "States.StringToJson($)", input: `"-0"`, want: `0`},
		{name: "Boolean", expr: "States.StringToJson($)", input: `"true"`, want: `true`},
		{name: "String", expr: "States.StringToJson($)", input: `"\"HelloWorld\""`, want: `"HelloWorld"`},
		{name: "Array", expr: "States.StringToJson($)", input: `"[1, 2, \"HelloWorld\"]"`, want: `[1,2,"HelloWorld"]`},
		{name: "Object", expr: "States.StringToJson($)", input: `"{\"Arg1\": 1, \"Arg2\": []}"`, want: `{"Arg1":1,"Arg2":[]}`},
		{name: "SurroundingSpace", expr: "States.StringToJson($)", input: `" {\"a\":1} "`, want: `{"a":1}`},
		{name: "Apostrophe", expr: "States.StringToJson($)", input: `"{\"a\":\"it's\"}"`, want: `{"a":"it's"}`},
		{name: "Literal", expr: `States.StringToJson('{"constant_in_literal": "false"}')`, want: `{"constant_in_literal":"false"}`},
		{name: "RoundTrip", expr: "States.StringToJson(States.JsonToString($))", input: `{"a":1,"nested":{"ok":true}}`, want: `{"a":1,"nested":{"ok":true}}`},
		// Jackson's readTree stops after the first value.
		{name: "TrailingValueIgnored", expr: "States.StringToJson($)", input: `"1 2"`, want: `1`},
		{name: "TrailingTextIgnored", expr: "States.StringToJson($)", input: `"{} x"`, want: `{}`},
		{name: "MalformedObject", expr: "States.StringToJson($)", input: `"{bad json}"`,
			cause: cannotConvert("States.StringToJson($)", "Unexpected character ('b' (code 98)): was expecting double-quote to start field name\n at "+jacksonSource+"line: 1, column: 2]")},
		{name: "TruncatedObject", expr: "States.StringToJson($)", input: `"{\"a\":1"`,
			cause: cannotConvert("States.StringToJson($)", "Unexpected end-of-input: expected close marker for Object (start marker at "+jacksonSource+"line: 1, column: 1])\n at "+jacksonSource+"line: 1, column: 7]")},
		{name: "UnknownToken", expr: "States.StringToJson($)", input: `"undefined"`,
			cause: cannotConvert("States.StringToJson($)", "Unrecognized token 'undefined': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at "+jacksonSource+"line: 1, column: 10]")},
		bad("NumberInput", "States.StringToJson($)", `123`, fn),
		bad("ObjectInput", "States.StringToJson($)", `{"a":1}`, fn),
		bad("ArrayInput", "States.StringToJson($)", `[1,2]`, fn),
		bad("NoArguments", "States.StringToJson()", ``, fn),
		bad("ExtraArgument", "States.StringToJson($, $)", `"{}"`, fn),
	})
}

func TestJacksonMessages(t *testing.T) {
	t.Parallel()
	// Messages for cases AWS was not recorded on, derived from Jackson's
	// parser (2.17+): unexpected characters point at the character, other
	// errors at the position after what was read.
	at := func(line, col string) string {
		return "\n at " + jacksonSource + "line: " + line + ", column: " + col + "]"
	}
	tests := []struct {
		name, text, want string
	}{
		{"MissingColon", `{"a" 1}`, "Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value" + at("1", "6")},
		{"MissingComma", `[1 2]`, "Unexpected character ('2' (code 50)): was expecting comma to separate Array entries" + at("1", "4")},
		{"MissingObjectComma", `{"a":1 "b":2}`, "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries" + at("1", "8")},
		{"TrailingCommaInArray", `[1,]`, "Unexpected character (']' (code 93)): expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')" + at("1", "4")},
		{"TrailingCommaInObject", `{"a":1,}`, "Unexpected character ('}' (code 125)): was expecting double-quote to start field name" + at("1", "8")},
		{"MissingValue", `{"a":}`, "Unexpected character ('}' (code 125)): expected a value" + at("1", "6")},
		{"MismatchedClose", `[1}`, "Unexpected close marker '}': expected ']' (for Array starting at " + jacksonSource + "line: 1, column: 1])" + at("1", "4")},
		{"CloseAtRoot", `]`, "Unexpected close marker ']': expected '}' (for root starting at " + jacksonSource + "line: 1, column: 0])" + at("1", "2")},
		{"UnclosedArray", "[1,\n2", "Unexpected end-of-input: expected close marker for Array (start marker at " + jacksonSource + "line: 1, column: 1])" + at("2", "2")},
		{"UnclosedString", `"abc`, "Unexpected end-of-input: was expecting closing quote for a string value" + at("1", "5")},
		{"PartialLiteral", `tru`, "Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')" + at("1", "4")},
		{"LiteralRunOn", `trueish`, "Unrecognized token 'trueish': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')" + at("1", "8")},
		{"SingleQuotes", `'a'`, "Unexpected character (''' (code 39)): expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')" + at("1", "1")},
		{"RootNumberRunOn", `1x`, "Unexpected character ('x' (code 120)): Expected space separating root-level values" + at("1", "2")},
		{"LeadingZero", `01`, "Invalid numeric value: Leading zeroes not allowed" + at("1", "2")},
		{"MinusAlone", `-x`, "Unexpected character ('x' (code 120)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value" + at("1", "2")},
		{"BadEscape", `"\x"`, "Unrecognized character escape 'x' (code 120)" + at("1", "4")},
		{"ControlCharacter", "\"a\nb\"", "Illegal unquoted character ((CTRL-CHAR, code 10)): has to be escaped using backslash to be included in string value" + at("1", "4")},
		{"NaN", `NaN`, "Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow" + at("1", "4")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, jsonString(tt.text))
			_, err := b.eval(t, "States.StringToJson($)")
			requireFailure(t, err, cannotConvert("States.StringToJson($)", tt.want))
		})
	}
}

func TestJsonToString(t *testing.T) {
	t.Parallel()
	runEvalCases(t, []evalCase{
		{name: "Null", expr: "States.JsonToString($)", input: `null`, want: `"null"`},
		{name: "Number", expr: "States.JsonToString($)", input: `1.1`, want: `"1.1"`},
		{name: "String", expr: "States.JsonToString($)", input: `"HelloWorld"`, want: `"\"HelloWorld\""`},
		{name: "Object", expr: "States.JsonToString($)", input: `{"foo": "bar", "n": [1, true]}`, want: `"{\"foo\":\"bar\",\"n\":[1,true]}"`},
		{name: "MixedArray", expr: "States.JsonToString($)", input: `[null,""," ",0,1,true,false,[0,1,false]]`, want: `"[null,\"\",\" \",0,1,true,false,[0,1,false]]"`},
		bad("NoArguments", "States.JsonToString()", ``, "States.JsonToString"),
	})
}

func TestJsonMerge(t *testing.T) {
	t.Parallel()
	const fn = "States.JsonMerge"
	runEvalCases(t, []evalCase{
		{name: "Shallow", expr: "States.JsonMerge(States.ArrayGetItem($, 0), States.ArrayGetItem($, 1), false)",
			input: `[{"a":{"a1":1,"a2":2},"b":2,"d":3},{"a":{"a3":1,"a4":2},"c":3,"d":4}]`,
			want:  `{"a":{"a3":1,"a4":2},"b":2,"d":4,"c":3}`},
		{name: "LiteralAndInput", expr: `States.JsonMerge(States.StringToJson('{"constant_in_literal": "false"}'), $, false)`,
			input: `{"constant_input_field":"constant_value"}`,
			want:  `{"constant_in_literal":"false","constant_input_field":"constant_value"}`},
		{name: "EmptyLeft", expr: "States.JsonMerge(States.StringToJson('{}'), $, false)", input: `{"x":1}`, want: `{"x":1}`},
		{name: "EmptyRight", expr: "States.JsonMerge($, States.StringToJson('{}'), false)", input: `{"x":1}`, want: `{"x":1}`},
		{name: "NullReplaces", expr: `States.JsonMerge($, States.StringToJson('{"nested": null}'), false)`, input: `{"nested":{"left":true},"keep":1}`, want: `{"nested":null,"keep":1}`},
		// AWS takes any deep flag but true as a shallow merge.
		{name: "StringFlag", expr: "States.JsonMerge($, $, 'false')", input: `{"a":1}`, want: `{"a":1}`},
		{name: "NullFlag", expr: "States.JsonMerge($, $, null)", input: `{"a":1}`, want: `{"a":1}`},
		bad("DeepMerge", "States.JsonMerge($, $, true)", `{"a":1}`, fn),
		bad("NullLeft", "States.JsonMerge(null, $, false)", `{}`, fn),
		bad("ArrayLeft", "States.JsonMerge(States.Array(), $, false)", `{}`, fn),
		bad("StringRight", "States.JsonMerge($, 'x', false)", `{}`, fn),
		bad("MissingFlag", "States.JsonMerge($, $)", `{}`, fn),
		bad("ExtraArgument", "States.JsonMerge($, $, false, 1)", `{}`, fn),
		bad("NoArguments", "States.JsonMerge()", ``, fn),
	})
}
