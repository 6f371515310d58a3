package lambda

// ProcStart is a process's start time, for tests.
var ProcStart = procStart
