package asl

import (
	"time"

	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
)

// QueryLanguage is "JSONPath" or "JSONata".
type QueryLanguage string

const (
	JSONPath QueryLanguage = "JSONPath"
	JSONata  QueryLanguage = "JSONata"
)

// StateType is the "Type" of a state.
type StateType string

const (
	TypeTask     StateType = "Task"
	TypePass     StateType = "Pass"
	TypeChoice   StateType = "Choice"
	TypeWait     StateType = "Wait"
	TypeSucceed  StateType = "Succeed"
	TypeFail     StateType = "Fail"
	TypeParallel StateType = "Parallel"
	TypeMap      StateType = "Map"
)

// StateMachine is a parsed definition, or one branch of a Parallel state or
// the item processor of a Map state (those have no TimeoutSeconds/Version).
type StateMachine struct {
	Comment        string
	StartAt        string
	States         map[string]*State
	Order          []string // state names in definition order
	TimeoutSeconds *int64
	Version        string
	// QueryLanguage is the language declared at this level, defaulting to
	// the enclosing one (JSONPath at the top).
	QueryLanguage QueryLanguage
}

// PathField is an optional path field that may also be null (InputPath,
// OutputPath, ResultPath). A nil *PathField means the field is absent.
type PathField struct {
	Null bool           // the field is JSON null
	Path *jsonpath.Path // set when not Null
}

// IntField is a count that is given literally, by a path (the "...Path"
// form), or by a JSONata expression. A nil *IntField means absent.
type IntField struct {
	Value *int64
	Path  *jsonpath.Path
	Expr  string // JSONata "{% ... %}" text
	// Number is a literal as a float64. It is set with Value, and alone
	// when the literal has a fraction, which only ToleratedFailurePercentage
	// allows (0.5 is a valid percentage).
	Number *float64
}

// State is one state. Fields that do not apply to its Type are zero.
type State struct {
	Name    string
	Type    StateType
	Comment string
	// QueryLanguage is the effective language of this state.
	QueryLanguage QueryLanguage

	Next string
	End  bool

	// JSONPath data flow.
	InputPath      *PathField
	OutputPath     *PathField
	ResultPath     *PathField
	Parameters     *payload.Template
	ResultSelector *payload.Template
	// JSONata data flow: raw values holding "{% ... %}" strings.
	Arguments any
	Output    any
	HasOutput bool

	// Assign (both languages). JSONPath: compiled template; JSONata: raw.
	Assign    *payload.Template
	AssignRaw any

	// Pass.
	Result    any
	HasResult bool

	// Task.
	Resource  string
	Timeout   *IntField // TimeoutSeconds / TimeoutSecondsPath
	Heartbeat *IntField // HeartbeatSeconds / HeartbeatSecondsPath
	// Credentials is the raw Credentials object; CredentialsTemplate its
	// compiled JSONPath form (JSONata: JSONataFields.Credentials).
	Credentials         any
	CredentialsTemplate *payload.Template

	// Task, Parallel, Map.
	Retry []*Retrier
	Catch []*Catcher

	// Choice.
	Choices []*ChoiceRule
	Default string

	// Wait. Exactly one of these is set.
	Seconds       *int64
	SecondsPath   *jsonpath.Path
	Timestamp     *time.Time
	TimestampText string // the literal Timestamp as written
	TimestampPath *jsonpath.Path
	WaitExpr      string // JSONata Seconds or Timestamp "{% ... %}"
	WaitExprField string // "Seconds" or "Timestamp": the field WaitExpr was given in

	// Fail.
	Error     string
	Cause     string
	ErrorPath *payload.Expr
	CausePath *payload.Expr
	HasError  bool
	HasCause  bool

	// Parallel.
	Branches []*StateMachine

	// Map.
	ItemProcessor    *StateMachine
	ProcessorMode    string // "INLINE" (default) or "DISTRIBUTED"
	ExecutionType    string // distributed: "STANDARD" or "EXPRESS"
	ItemsPath        *jsonpath.Path
	Items            any // JSONata Items (raw), or a JSON array literal
	ItemSelector     *payload.Template
	ItemSelectorRaw  any // JSONata ItemSelector (raw)
	MaxConcurrency   *IntField
	ItemReader       any // raw object
	ItemBatcher      any // raw object
	ResultWriter     any // raw object
	ToleratedCount   *IntField
	TolerancePercent *IntField // ToleratedFailurePercentage (a number 0-100)
	Label            string

	// JSONata holds the compiled JSONata fields of a JSONata state.
	JSONata *JSONataFields
}

// Retrier is one element of Retry.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds int64   // default 1
	MaxAttempts     int64   // default 3
	BackoffRate     float64 // default 2.0
	MaxDelaySeconds *int64
	JitterStrategy  string // "FULL" or "NONE" (default)
	Comment         string
}

// Catcher is one element of Catch.
type Catcher struct {
	ErrorEquals []string
	Next        string
	ResultPath  *PathField
	Assign      *payload.Template
	AssignRaw   any
	Output      any
	HasOutput   bool
	Comment     string
	JSONata     *JSONataFields // Output, Assign (JSONata states)
}

// ChoiceRule is one Choice rule or a nested boolean expression inside one.
// Top-level rules have Next; nested ones do not.
type ChoiceRule struct {
	// Boolean combinators.
	And []*ChoiceRule
	Or  []*ChoiceRule
	Not *ChoiceRule

	// A comparison: Variable Operator (Operand | OperandPath).
	Variable    *jsonpath.Path
	Operator    string // e.g. "StringEquals", "NumericLessThanPath", "IsPresent"
	Operand     any    // literal operand (string, Number, bool)
	OperandPath *jsonpath.Path

	// JSONata: Condition "{% ... %}".
	Condition string

	Next      string
	Assign    *payload.Template
	AssignRaw any
	Output    any
	HasOutput bool
	Comment   string
	JSONata   *JSONataFields // Condition, Output, Assign (JSONata states)
}
