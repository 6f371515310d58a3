// Package asl turns an Amazon States Language definition into a typed,
// validated StateMachine, or into the diagnostics AWS Step Functions would
// report for it.
//
// A definition is parsed once, when a state machine is created or updated;
// the interpreter then works from the model and never looks at the JSON
// again. Paths, payload templates and intrinsic function calls are compiled
// here, so a definition that parses cannot fail later for its syntax.
//
// The package is pure: no I/O, no clock, no logging.
//
// # The walk
//
// Parsing is one walk over the JSON value, which builds the model and
// collects diagnostics at the same time:
//
//	definition text
//	     │ jsonvalue.Parse ──────────────► INVALID_JSON_DESCRIPTION (in Jackson's words)
//	     ▼
//	root object
//	     │ machine: StartAt, States, QueryLanguage, ...
//	     │   └─ state, for each state in order
//	     │        ├─ Type ────────────────► unknown type
//	     │        ├─ QueryLanguage ───────► JSONPath in a JSONata machine
//	     │        ├─ each field: allowed for the type? for the language?
//	     │        │    └─ typed value: paths, templates, numbers, rules,
//	     │        │       retriers, catchers, branches, item processors
//	     │        │       (nested machines are walked the same way)
//	     │        └─ fields together: Next/End, Wait's one field, required
//	     │           fields, exclusive pairs, heartbeat < timeout
//	     │ transitions, per machine
//	     │   ├─ every StartAt, Next, Default, Choices[i].Next, Catch[i].Next
//	     │   │  names a state of the same machine ──► MISSING_TRANSITION_TARGET
//	     │   ├─ the top level has a terminal state ─► MISSING_END_STATE
//	     │   └─ every state is reachable from StartAt
//	     ▼
//	*StateMachine, or nil and the diagnostics
//
// Every problem is reported, not only the first, up to Options.MaxDiagnostics
// (DefaultMaxDiagnostics, 100, like the default maxResults of
// ValidateStateMachineDefinition). Parse and ParseWith return a machine only
// when no diagnostic is an ERROR; Validate returns the diagnostics alone.
//
// # Diagnostics
//
// A Diagnostic has the fields ValidateStateMachineDefinition returns:
// severity, code, message and location. Codes and messages are AWS's where
// AWS's wording is known (from recorded responses and published error
// messages), for example:
//
//	SCHEMA_VALIDATION_FAILED: These fields are required: [States, StartAt] at /
//	SCHEMA_VALIDATION_FAILED: String does not match RFC3339 timestamp at /States/WaitUntil/Timestamp
//	MISSING_TRANSITION_TARGET: Missing 'Next' target: NotifyOverflow at /States/Check/Choices[0]/Next
//	MISSING_TRANSITION_TARGET: State "parallel" is not reachable. at /States/parallel
//
// Each message has one constructor, in diagnostic.go, which says whether
// the wording is AWS's. Diagnostic.String renders the "CODE: message at
// location" form AWS uses inside InvalidDefinition errors, and
// InvalidDefinitionMessage joins those the way CreateStateMachine does.
//
// Locations are written as AWS writes them: a JSON pointer over field names
// in which array elements are "[i]" after the array's name and names are
// not escaped ("/States/P/Branches[0]/States/A/Next"); "/" is the root.
// Problems with ".$" keys are located at the template field
// ("/States/A/Parameters"), and fields of the other query language at the
// state, as AWS does. A few diagnostics have no location, as on AWS:
// MISSING_END_STATE, and a definition that is not a JSON object.
//
// # Query languages
//
// A machine is JSONPath unless its top-level QueryLanguage says JSONata. A
// state may declare its own language, except JSONPath inside a JSONata
// machine. States that declare none use the machine's language, at any
// depth: a Map's or Parallel's own QueryLanguage applies to that state's
// fields, not to the states of its item processor or branches (this is how
// AWS validates, and what its documentation says). Any declared value other
// than exactly "JSONPath" selects JSONata, and is reported when it is not
// "JSONata".
//
// JSONPath fields are compiled (paths with jsonpath.Compile, payload
// templates with payload.Compile, ErrorPath and CausePath with
// payload.CompileExpr). JSONata fields (Arguments, Output, Assign, Items,
// ItemSelector, Condition, and "{% ... %}" strings where numbers or
// timestamps may be given) are kept as written; evaluating them is the
// interpreter's job. A field of the other language is reported:
//
//	The QueryLanguage is set to 'JSONata', but field 'InputPath' is only supported for the 'JSONPath' QueryLanguage
//
// # What the model holds
//
// The model keeps both spellings of renamed fields in one place: Iterator
// and ItemProcessor fill State.ItemProcessor, a Map's Parameters and
// ItemSelector fill State.ItemSelector, and the literal, "...Path" and
// JSONata forms of a count fill one IntField. Defaults are applied: INLINE
// processor mode, and IntervalSeconds 1, MaxAttempts 3, BackoffRate 2.0 and
// JitterStrategy NONE for retriers. ItemReader, ItemBatcher and
// ResultWriter are checked for shape and kept as JSON values.
package asl
