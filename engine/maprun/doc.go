// Package maprun (engine/maprun) is the task runner of a distributed Map's map run
// (interp.MapRunRequest, task.Request.MapRun): it runs the run's children
// as executions of their own on the engine, its Host. Beside it, Spool
// is the runner that keeps a distributed Map's items in the store as they
// are read (task.Request.Reader.Spool), for the map run to read a page at
// a time.
//
// The run's rules are package interp/maprun's (imported under its own
// name, maprun), which the in-process Driver
// shares: its bookkeeping (maprun.Run: which child starts next, the
// items failed, the tolerance, the counts), its children's names
// (maprun.Names) and its ResultWriter. What is the runner's is durability
// and concurrency: each child is an execution of its own, with its
// history, recorded with the map run's ARN and run on the state machine
// <parent's>/<label> (the Map's ItemProcessor in the parent's revision:
// Processor, SplitLabel); a run picked up again (after a restart, or
// redriven) finds the children it started by their names and starts
// exactly those it did not (maprun.Run.Resume), so each child is started
// once. A run keeps at most MaxConcurrency children running (Concurrency
// when unbounded), and the runner at most Starters child starts in
// flight across its runs (a run at most StartBytes of their input); a run fails as soon as more items fail than it
// tolerates (stopping the children still running), and otherwise answers
// the parent's task with the children's outputs in order, or what its
// ResultWriter makes of them. Its row (store.MapRun) holds its settings
// and counts, written when it starts, at most every SaveEvery while it
// runs, and when it ends (row.go); Update applies an UpdateMapRun.
//
// # The host
//
// The runner starts, redrives and stops children through the engine, its
// Host: start.Children, the host it shares with the nested runner, and
// what a run needs beside its children (the engine's context, its task
// runners, whether a child runs on this node). The engine starts a child
// durably through the Starter (its target resolved already: the
// ItemProcessor at the parent's revision), keeps the clock's count of
// the run's work (Host.Go: a start in flight is work; the parent's task
// waits on the children, not on the outside), and tells the runner when
// a child ends (ChildEnded). On a cluster, a run also watches its row for another
// node's UpdateMapRun and the store for children that ended on other
// nodes.
//
//	Run ─► WaitOn ─► load the row and the children found ─► pump ─► Host.Start, Host.Redrive
//	                                                          ▲      (at most Starters in flight)
//	                                                          │                  │
//	                                                          └──── ChildEnded ◄─┘
//
//	pump, once every child ended: the parent's task answered (the results
//	written first, with a ResultWriter), the row written
package maprun
