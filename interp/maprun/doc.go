// Package maprun (interp/maprun) is a distributed Map's map run, the part both of its
// hosts share: the engine, which runs each child as a durable execution
// of its own, and interp.Driver, which runs them in-process for `stepwise
// run` and `stepwise test`.
//
// Each rule of a map run is here once: the tolerated failures
// (Tolerance), the children's names and ARNs (ChildName, ChildArn), the
// bookkeeping of the children planned, started and ended (Run: which
// child starts next, the items failed, the counts DescribeMapRun shows,
// the check that every item ran), what a child that did not succeed
// answers (ChildEntry), and what a ResultWriter writes (Run.Outcome,
// Write.Files). A host starts the children Run hands it and tells Run how
// they ended; how a child runs, and whether the run survives a restart,
// is the host's.
//
// The children's inputs (the ItemSelector, the ItemBatcher) are the
// interpreter's: a Run reads them through a Plan (interp.Planner).
package maprun
