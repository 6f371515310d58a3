// Package jsonata implements the JSONata 2.0.6 query and transformation
// language used by AWS Step Functions (QueryLanguage "JSONata"), minus $eval.
//
// # Pipeline
//
//	source ──lexer──▶ tokens ──Pratt parser──▶ raw AST ──process──▶ AST ──evaluator──▶ value
//
// The lexer and parser (lexer.go, parser.go) follow jsonata.js: a Pratt
// parser with the same binding powers, then a processing pass (process)
// that turns dot chains into paths of steps, attaches predicates as stages,
// resolves the parent operator % into tuple-stream labels, and annotates
// focus (@) and index (#) bindings. Every failure is an *Error carrying the
// JSONata error code (S0xxx for syntax, T/D/U for evaluation), the
// position just after the offending token, and the token.
//
// # Values
//
// At the API boundary values use package jsonvalue (nil, bool,
// jsonvalue.Number, string, []any, *jsonvalue.Object). Internally
// (value.go) numbers are float64, JSON null is the sentinel null, Go nil is
// JSONata's undefined, and every array is an *arr carrying jsonata.js's
// sequence flags (sequence, keepSingleton, outerWrapper, cons,
// tupleStream). Eval converts in and out.
//
// The package is pure: it never logs. $now and $millis read the wall clock.
package jsonata
