package server

import (
	"context"
	"log/slog"
	"time"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/integration"
	"stepwise/integration/events"
	"stepwise/observe/metrics"
	"stepwise/observe/notify"
	"stepwise/store"
)

// observers tells every observer of the engine's doings, in order.
type observers []engine.Observer

func (o observers) StepCommitted(s *engine.CommittedStep) {
	for _, x := range o {
		x.StepCommitted(s)
	}
}

func (o observers) BatchCommitted(steps []*store.Step, took time.Duration, err error) {
	for _, x := range o {
		x.BatchCommitted(steps, took, err)
	}
}

func (o observers) Resumed(arn string, took time.Duration) {
	for _, x := range o {
		x.Resumed(arn, took)
	}
}

// nudger hands the deliverer of status-change events the notices a
// transaction committed (all of them at once: they share their IDs), and
// so wakes it.
type nudger struct{ d *notify.Deliverer }

func (nudger) StepCommitted(*engine.CommittedStep) {}

func (n nudger) BatchCommitted(steps []*store.Step, _ time.Duration, err error) {
	if err != nil {
		return
	}
	var notices []*store.OutboxEvent
	for _, s := range steps {
		notices = append(notices, s.Outbox...)
	}
	if len(notices) > 0 {
		n.d.Offer(notices)
	}
}

func (nudger) Resumed(string, time.Duration) {}

// deliverer builds the deliverer of e's destinations; nil when there is
// none.
func deliverer(ctx context.Context, e Events, cfg *config.Serve, exec store.Executor, met *metrics.Metrics, leads func(context.Context) bool, log *slog.Logger) (*notify.Deliverer, error) {
	var dests []notify.Destination
	for _, raw := range e.Webhooks {
		dests = append(dests, &notify.Webhook{URL: raw, Secret: []byte(e.Secret)})
	}
	if e.Bus != "" {
		client, err := events.NewClient(ctx, &integration.Config{Region: cfg.Region, Account: cfg.Account,
			Endpoint: cfg.Integrations.AWSEndpoint, Endpoints: cfg.Integrations.Endpoints})
		if err != nil {
			return nil, err
		}
		dests = append(dests, &notify.Bus{Bus: e.Bus, Client: client})
	}
	if e.File != "" {
		dests = append(dests, &notify.File{Path: e.File})
	}
	if len(dests) == 0 {
		return nil, nil
	}
	opts := notify.Options{Logger: log, Leads: leads}
	if met != nil {
		opts.Stats = met.NotifyStats()
	}
	return notify.New(exec, dests, opts), nil
}
