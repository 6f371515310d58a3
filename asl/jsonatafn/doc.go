// Package jsonatafn holds the functions AWS Step Functions adds to JSONata:
// $partition, $range, $hash, $random, $uuid and $parse. Funcs returns them
// as host bindings for jsonata.Expression.EvalWith:
//
//	fns := jsonatafn.Funcs(jsonatafn.Env{Rand: execRand})
//	v, ok, err := expr.EvalWith(input, true, &jsonata.Options{Funcs: fns, Vars: vars})
//
// # Semantics
//
//	$partition(array, size)    [[1,2],[3]] for ([1,2,3], 2); size a positive integer
//	$range(start, end, step)   start, start+step, ... up to end inclusive; integers,
//	                           step not zero, at most 1000 items; one item is
//	                           returned as that item, as a JSONata sequence would be
//	$hash(string, algorithm)   lowercase hex digest; MD5, SHA-1, SHA-256, SHA-384, SHA-512
//	$random([seed])            a number in [0, 1); with an integer seed it is
//	                           java.util.Random(seed).nextDouble(), the same for the same seed
//	$uuid()                    a version 4 UUID
//	$parse(json)               the JSON value the string holds
//
// Arguments of the wrong JSONata type fail the function's signature with
// JSONata's T0410/T0412 errors, as for the built-in functions. Every other
// failure is an *Error; AWS reports both kinds as States.QueryEvaluationError.
//
// # Replay
//
// $random() without a seed and $uuid() draw only from Env.Rand, so an
// execution that is replayed with the same Rand sequence evaluates to the
// same values. The package is pure: no clock, no I/O, no logging.
package jsonatafn
