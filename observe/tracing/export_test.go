package tracing

// Held is what the tracer holds of a running execution: its open spans
// and the events it remembers the span of. Read it after a Flush, with
// no step coming in.
func (t *Tracer) Held(arn string) (open, ctx int, ok bool) {
	x := t.execs[arn]
	if x == nil {
		return 0, 0, false
	}
	return len(x.open), x.ctx.len(), true
}

// QueuedSteps is how many steps wait for the worker.
func (t *Tracer) QueuedSteps() int { return len(t.queue) }

// QueueBatches is how many batches the export queue holds at most.
const QueueBatches = queueBatches
