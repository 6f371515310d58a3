// Package jsonpath implements the JSONPath dialect of AWS Step Functions:
// the paths of InputPath, OutputPath, ResultPath, ItemsPath, the "*Path"
// fields, Choice variables and the ".$" keys of payload templates.
//
// Step Functions evaluates paths with Jayway JsonPath (Java). This package
// follows Jayway where AWS users can see the difference: which paths are
// definite, what an indefinite path returns, how slices and filters behave,
// and the wording of "not found" messages.
//
// # Roots
//
//	$...        the state input (Env.Input)            RootInput
//	$$...       the context object (Env.Context)       RootContext
//	$name...    the variable "name" (Env.Vars)         RootVariable
//
// Variable names follow the ASL rules: a letter or '_', then letters,
// digits and '_'.
//
// # Segments
//
//	.name  ['name']  ["name"]   a member; dot names run up to the next '.',
//	                            '[' or '(' and may hold '-', '*', ':', ...
//	                            but no space
//	['a','b']                   several members
//	[0]  [-1]  [0,2]            elements; negative indexes count from the end
//	[1:3]  [1:]  [:2]  [-2:]    slices (Jayway rules); [::2] adds a step
//	.*  [*]                     every member or element
//	..name  ..*  ..[0]          recursive descent (pre-order)
//	[?(@.a == 'x' && @.n > 1)]  filters
//	.length()  .size()          the size of an array or object, last only
//
// Whitespace is allowed inside brackets and filters. Quoted names are taken
// as written: AWS does not unescape them, so $['a\"b'] names the member
// a\"b (a backslash only keeps the next character from closing the name).
//
// Filters compare with == != < <= > >= === !== =~ /regex/flags, in, nin,
// contains, size, empty, subsetof, anyof and noneof; combine with && || !
// and parentheses; and test existence with [?(@.a)] and [?(!@.a)]. "@" is
// the element under test and "$" the root of the evaluation. Literals are
// strings in either quote, numbers, true, false, null and JSON arrays and
// objects. As in Jayway, a side that selects nothing makes == false and !=
// true; numbers compare by value, and a number and a string compare as
// Jayway does (1 == '1' holds).
//
// # Definite and indefinite paths
//
// A definite path selects at most one value: it has only single names,
// single indexes, a final function, and several names only in its last
// segment (which Jayway merges into one object: $['a','b'] gives
// {"a":...,"b":...}). Evaluating it returns that value, or a *NotFoundError
// wrapping ErrNotFound whose text is the message AWS reports:
//
//	Invalid path '$.a' : No results for path: $['a']
//
// Any other path is indefinite and returns a []any of every match in
// document order; it never fails, and selects [] when nothing matches (AWS
// gives [] for $.items[*].x on {}).
//
// A reference path (IsReference) is the restricted form ResultPath,
// OutputPath and friends must use in ASL: names and single indexes only.
// Set places a value at a reference path the way ResultPath does.
//
//	                 ┌─ definite ───► value | *NotFoundError (ErrNotFound)
//	Compile ─► Path ─┤
//	                 └─ indefinite ─► []any (possibly empty)
//
// # Immutability
//
// JSON values (see package jsonvalue) are shared and never changed in
// place. Evaluation returns parts of its input without copying them; Set
// copies only the objects and arrays along the path it writes and shares
// everything else. A compiled Path is immutable and safe for concurrent use.
//
// Evaluating a definite path of names and indexes does not allocate: it
// is on the hot path of every state transition.
package jsonpath
