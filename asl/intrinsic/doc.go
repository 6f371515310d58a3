// Package intrinsic parses and evaluates the Amazon States Language
// intrinsic functions: the States.* calls a JSONPath-mode state may write
// in place of a path, as in
//
//	"greeting.$": "States.Format('Hello, {}!', $.name)"
//
// # Life of a call
//
// A call is parsed once, when the definition is compiled, and evaluated
// every time its state runs:
//
//	"States.Format('{}', $.a)"
//	          |
//	        Parse ---- *SyntaxError (offset + message) -> definition rejected
//	          |
//	        *Call  (function, arguments: literals, compiled paths, calls)
//	          |  \
//	          |   Paths() -> the $, $$ and $var paths it reads
//	          |
//	        Eval(env) -- arguments left to right, innermost calls first
//	          |    \
//	        value   *failure.Failure (States.Runtime) -> state fails
//
// Parse rejects what AWS rejects when the state machine is created:
// malformed syntax, unknown function names, escapes other than \' \{ \}
// and \\ in string literals, and invalid paths. A wrong number of
// arguments is not among them: AWS creates the state machine and fails the
// execution when the call runs, so Parse accepts it and Eval fails;
// Validate reports it for callers that want an early warning.
//
// # Errors at run time
//
// Every failure is States.Runtime; the cause is the part AWS writes after
// "An error occurred while executing the state 'X' (entered at the event
// id #N). ". The interpreter adds that prefix. The causes take three
// shapes, always naming the outermost call as written:
//
//	There was an error while evaluating the intrinsic function: <call>. Invalid arguments in States.X
//	There was an error while evaluating the intrinsic function: <call>. <function-specific text>
//	The function '<call>' had the following error: The JsonPath argument for the field '<path>' could not be found in the input '<json>'
//
// The second shape covers the few functions AWS explains further: template
// errors of States.Format and the Jackson parser message of
// States.StringToJson.
//
// # The JVM underneath
//
// AWS evaluates intrinsics on the JVM and several results show it. This
// package reproduces them (java.go):
//
//   - States.Format prints values as String.valueOf does: objects as
//     {a=1, b=[]}, doubles as 1.0E7.
//   - States.ArrayContains compares those printed forms, so true matches
//     "true" and object member order matters.
//   - States.ArrayUnique returns the order of a java.util.HashSet.
//   - States.MathRandom with a seed uses java.util.Random, so a seed gives
//     the number AWS gives.
//   - States.MathAdd rounds like Math.round; ArrayRange, ArrayPartition,
//     ArrayGetItem and MathRandom truncate instead.
//   - Base64Decode is as lenient as Apache Commons Codec, StringToJson as
//     Jackson's readTree, StringSplit splits like StringTokenizer.
//
// # Files
//
// One file per function family, as the AWS guide groups them: array.go,
// encoding.go, hash.go, json.go (with jackson.go), math.go, string.go,
// uuid.go and format.go (generic). parse.go holds the parser and
// intrinsic.go the Call type and error rendering.
package intrinsic
