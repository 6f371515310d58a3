package lambda

// ProcStart is a process's start time, for tests.
var ProcStart = procStart

// RunVar names the run's token in a function's environment, for tests.
const RunVar = runVar

// PidNamespace names this process's process id namespace, for tests.
var PidNamespace = pidNamespace

// KillLeft kills what the server of a record left, for tests.
func KillLeft(path string) (int, error) { return killLeft(path, bootID(), pidNamespace()) }
