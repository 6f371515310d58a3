package server

import (
	"context"
	"time"

	"stepwise/console"
	"stepwise/observe/notify"
	"stepwise/store"
)

// lateInterval is the time between two looks for jobs running late.
var lateInterval = 30 * time.Second

// startLateJobs looks for jobs running late (a Task state past twice its
// usual duration, console.LateJobs) every lateInterval on the leader,
// until the returned function is called: it sets the gauge
// stepwise_late_jobs and writes each job run's late event to the outbox
// once (delivered as the status-change events are, when they are). A
// server that is not the leader reports none.
func (s *Server) startLateJobs(ctx context.Context) (stop func()) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		told := map[string]bool{} // job runs whose event is written
		t := time.NewTicker(lateInterval)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
			}
			told = s.lateJobs(lctx, told)
		}
	}()
	return func() { cancel(); <-done }
}

// lateJobs is one look for jobs running late; it returns the job runs
// told of that still run late.
func (s *Server) lateJobs(ctx context.Context, told map[string]bool) map[string]bool {
	var jobs []console.LateJob
	if s.eng.Leads(ctx) {
		var err error
		if jobs, err = s.console.LateJobs(ctx); err != nil {
			s.log.Warn("server: look for jobs running late", "error", err)
			return told
		}
	}
	if s.met != nil {
		counts := map[[2]string]int{}
		for _, j := range jobs {
			counts[[2]string{j.StateMachine, j.State}]++
		}
		s.met.LateJobs(counts)
	}
	now := s.eng.Now()
	still := map[string]bool{}
	var notices []*store.OutboxEvent
	for _, j := range jobs {
		key := j.Execution + "\x00" + j.State + "\x00" + j.Entered.String()
		still[key] = true
		if told[key] {
			continue
		}
		s.log.Info("server: job running late", "execution_arn", j.Execution, "state", j.State, "running", j.Running, "usual", j.Usual)
		if s.deliverer != nil {
			notices = append(notices, &store.OutboxEvent{CreatedAt: now, Body: notify.LateNotice(notify.LateJob{ExecutionArn: j.Execution,
				StateMachineArn: j.StateMachine, Name: execName(j.Execution), State: j.State, Entered: j.Entered, Running: j.Running, Usual: j.Usual}, now)})
		}
	}
	if len(notices) > 0 {
		if err := s.drv.Executor().OutboxWrite(ctx, notices); err != nil {
			s.log.Warn("server: write late events", "error", err)
			return told // told again next time
		}
	}
	return still
}

func execName(arn string) string {
	for i := len(arn) - 1; i >= 0; i-- {
		if arn[i] == ':' {
			return arn[i+1:]
		}
	}
	return arn
}
