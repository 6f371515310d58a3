package intrinsic

import (
	"strings"
	"testing"
)

func TestHash(t *testing.T) {
	t.Parallel()
	const fn = "States.Hash"
	runEvalCases(t, []evalCase{
		{name: "MD5", expr: "States.Hash($, 'MD5')", input: `"input data"`, want: `"812f45842bc6d66ee14572ce20db8e86"`},
		{name: "SHA1", expr: "States.Hash($, 'SHA-1')", input: `"input data"`, want: `"aaff4a450a104cd177d28d18d74485e8cae074b7"`},
		{name: "SHA256", expr: "States.Hash($, 'SHA-256')", input: `"input data"`, want: `"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3"`},
		{name: "SHA384", expr: "States.Hash('hello', 'SHA-384')", want: `"59e1748777448c69de6b800d7a33bbfb9ff1b463e44354c3553bcdb9c666fa90125a3c79f90397bdf5f6a13de828684f"`},
		{name: "SHA512", expr: "States.Hash('hello', 'SHA-512')", want: `"9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"`},
		{name: "Empty", expr: "States.Hash('', 'SHA-256')", want: `"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`},
		{name: "MultiByte", expr: "States.Hash($, 'SHA-256')", input: `"✓"`, want: `"1dabba21cdad44541f6b15796f8d22978fc7ea10c46aeceeeeb66c23b3ac7604"`},
		{name: "Astral", expr: "States.Hash('🚀', 'SHA-256')", want: `"ebbc0b2870eb323f2b6cffa5c493ceef81ae7eb36afc73d4e0367301631daec5"`},
		{name: "NUL", expr: "States.Hash($, 'MD5')", input: `"abc\u0000def"`, want: `"a5e4d5963ae44c1f4bfb37b1a3d55a3c"`},
		{name: "AlgorithmFromInput", expr: "States.Hash('Data to encode', $)", input: `"MD5"`, want: `"ca405671828a177e26947171bbe1e352"`},
		{name: "NestedFormat", expr: "States.Hash(States.Format('{}:{}', 'x', 'y'), 'SHA-256')", want: `"1274e286686b54fe765ec40735665b4bf789cee2a5b22124c5e0491a88e15271"`},
		// AWS hashes non-string data as Java prints it.
		{name: "NumberData", expr: "States.Hash(123, 'MD5')", want: `"202cb962ac59075b964b07152d234b70"`},
		{name: "AtLimit", expr: "States.Hash($, 'MD5')", input: jsonString(strings.Repeat("a", 10000)), want: `"0d0c9c4db6953fee9e03f528cafd7d3e"`},
		bad("OverLimit", "States.Hash($, 'SHA-256')", jsonString(strings.Repeat("a", 10001)), fn),
		bad("UnknownAlgorithm", "States.Hash('data', 'UNSUPPORTED')", ``, fn),
		bad("LowercaseAlgorithm", "States.Hash('data', 'sha-256')", ``, fn),
		bad("AlgorithmWithoutHyphen", "States.Hash('data', 'SHA256')", ``, fn),
		bad("EmptyAlgorithm", "States.Hash('data', '')", ``, fn),
		bad("NumericAlgorithm", "States.Hash('hello', 123)", ``, fn),
		bad("NoArguments", "States.Hash()", ``, fn),
		bad("OneArgument", "States.Hash('hello')", ``, fn),
		bad("ExtraArgument", "States.Hash('hello', 'SHA-256', 'extra')", ``, fn),
	})
}
