// Package jp1 reads JP1/AJS3 unit definitions (the text `ajsprint -a`
// prints and `ajsdefine` reads) and converts their job nets into a
// Stepwise app: a SAM template, one state machine a job net, a local
// function that runs the jobs' command lines, business calendars and a
// report of what was not carried over.
//
// # Reading
//
// Parse reads the file into units: `unit=NAME,PERMISSION,USER,GROUP;`
// followed by a block `{ ... }` of parameters (`key=value;`, values
// quoted with `#"` and `##` as escapes) and nested units, `/* */`
// comments between them. Errors carry the line and column.
//
// # Converting
//
// Convert turns each job net (root and nested) into a state machine.
// Its relations (ar=) form a DAG, run as topological levels: the units
// of one level are the branches of a Parallel state, which runs after
// the level before it has ended, so every dependency holds (some units
// wait longer than they would on JP1/AJS3). Each Parallel carries the
// failure policy finish-running, so the jobs running beside a failed
// one end. Parts of a net that share no relation run side by side.
//
//	A ──► B ──► D          Stage 1: A
//	 └──► C ──┘            Stage 2: Parallel(B, C)
//	                       Stage 3: D
//
// A nested net is a child execution (states:startExecution.sync:2) of
// its own state machine. A recovery unit runs in the Catch of the unit
// it recovers, and the branch then fails.
package jp1
