package intrinsic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBase64Encode(t *testing.T) {
	t.Parallel()
	const fn = "States.Base64Encode"
	runEvalCases(t, []evalCase{
		{name: "Text", expr: "States.Base64Encode($)", input: `"Data to encode"`, want: `"RGF0YSB0byBlbmNvZGU="`},
		{name: "Literal", expr: "States.Base64Encode('hello')", want: `"aGVsbG8="`},
		{name: "Empty", expr: "States.Base64Encode('')", want: `""`},
		{name: "Space", expr: "States.Base64Encode(' ')", want: `"IA=="`},
		{name: "MultiByte", expr: "States.Base64Encode($)", input: `"✓"`, want: `"4pyT"`},
		{name: "Japanese", expr: "States.Base64Encode($)", input: `"こんにちは"`, want: `"44GT44KT44Gr44Gh44Gv"`},
		{name: "Astral", expr: "States.Base64Encode('🚀')", want: `"8J+agA=="`},
		{name: "Newline", expr: "States.Base64Encode($)", input: `"line1\nline2"`, want: `"bGluZTEKbGluZTI="`},
		{name: "NUL", expr: "States.Base64Encode($)", input: `"abc\u0000def"`, want: `"YWJjAGRlZg=="`},
		{name: "NestedFormat", expr: "States.Base64Encode(States.Format('{}-{}', 'x', 'y'))", want: `"eC15"`},
		{name: "AtLimit", expr: "States.Base64Encode($)", input: jsonString(strings.Repeat("aaa", 3333) + "a"), want: jsonString(strings.Repeat("YWFh", 3333) + "YQ==")},
		bad("OverLimit", "States.Base64Encode($)", jsonString(strings.Repeat("a", 10001)), fn),
		// Java counts UTF-16 units: 5001 rockets are 10002 characters.
		bad("OverLimitAstral", "States.Base64Encode($)", jsonString(strings.Repeat("🚀", 5001)), fn),
		bad("Number", "States.Base64Encode(123)", ``, fn),
		bad("Object", "States.Base64Encode($)", `{}`, fn),
		bad("Array", "States.Base64Encode($)", `["x"]`, fn),
		bad("NoArguments", "States.Base64Encode()", ``, fn),
		bad("ExtraArgument", "States.Base64Encode('a', 'b')", ``, fn),
	})
}

func TestBase64Decode(t *testing.T) {
	t.Parallel()
	const fn = "States.Base64Decode"
	runEvalCases(t, []evalCase{
		{name: "Text", expr: "States.Base64Decode($)", input: `"RGF0YSB0byBlbmNvZGU="`, want: `"Data to encode"`},
		{name: "Literal", expr: "States.Base64Decode('aGVsbG8=')", want: `"hello"`},
		{name: "Empty", expr: "States.Base64Decode('')", want: `""`},
		{name: "MultiByte", expr: "States.Base64Decode('4pyT')", want: `"✓"`},
		{name: "Japanese", expr: "States.Base64Decode('44GT44KT44Gr44Gh44Gv')", want: `"こんにちは"`},
		{name: "NUL", expr: "States.Base64Decode($)", input: `"YWJjAGRlZg=="`, want: `"abc\u0000def"`},
		{name: "RoundTrip", expr: "States.Base64Decode(States.Base64Encode('hello'))", want: `"hello"`},
		{name: "UnpaddedThree", expr: "States.Base64Decode('abc')", want: "\"i\ufffd\""},
		// Lenient like Commons Codec: AWS returns output for all of these.
		{name: "SurroundingSpaces", expr: "States.Base64Decode(' YWJjZA== ')", want: `"abcd"`},
		{name: "StopsAtPadding", expr: "States.Base64Decode('ab==cd')", want: `"i"`},
		{name: "SkipsIllegalCharacters", expr: "States.Base64Decode('!!!invalid!!!')", want: `"` + "\ufffd{\u0696'" + `"`},
		{name: "URLSafeAlphabet", expr: "States.Base64Decode('-_-_')", want: `"` + "\ufffd\ufffd\ufffd" + `"`},
		{name: "DanglingCharacterDropped", expr: "States.Base64Decode('aGVsbG8hx')", want: `"hello!"`},
		{name: "AtLimit", expr: "States.Base64Decode($)", input: jsonString(strings.Repeat("A", 10000)), want: jsonString(strings.Repeat("\x00", 7500))},
		bad("OverLimit", "States.Base64Decode($)", jsonString(strings.Repeat("A", 10001)), fn),
		bad("Number", "States.Base64Decode(123)", ``, fn),
		bad("Object", "States.Base64Decode($)", `{}`, fn),
		bad("NoArguments", "States.Base64Decode()", ``, fn),
		bad("ExtraArgument", "States.Base64Decode('aGVsbG8=', 'extra')", ``, fn),
	})
}

func TestJavaUTF8String(t *testing.T) {
	t.Parallel()
	// new String(bytes, UTF_8) as printed by a JVM.
	tests := []struct{ in, want string }{
		{"\xe2\x82\x41", "\ufffdA"},
		{"\xe2\x82", "\ufffd"},
		{"\xed\xa0\x80\x41", "\ufffdA"},
		{"\xed\xa0\x41", "\ufffdA"},
		{"\xed\x9f\x41", "\ufffdA"},
		{"\xed\xa0\x80\xed\xa0\x80", "\ufffd\ufffd"},
		{"\xf0\x90\x80\x41", "\ufffdA"},
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xf0\x80\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xf8\x88\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xe0\x80\xaf", "\ufffd\ufffd\ufffd"},
		{"\xe0\x9f\x80", "\ufffd\ufffd\ufffd"},
		{"\xe0\xa0\x41", "\ufffdA"},
		{"\xff\x41", "\ufffdA"},
		{"\x80\x80\x41", "\ufffd\ufffdA"},
		{"\xf0\x9f\x9a", "\ufffd"},
		{"\xf0\x9f\x9a\x80", "🚀"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, javaUTF8String([]byte(tt.in)), "%q", tt.in)
	}
}
