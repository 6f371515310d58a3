package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/spf13/pflag"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/integration"
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

// eventFlags are the destinations of status-change events.
type eventFlags struct {
	webhooks []string
	secret   string
	bus      string
	file     string
}

func (e *eventFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&e.webhooks, "events-webhook", nil, "POST every execution status-change event (EventBridge's shape) to this URL (repeatable)")
	f.StringVar(&e.secret, "events-webhook-secret", "", "sign webhook requests with HMAC-SHA256 under this secret (default $STEPWISE_EVENTS_WEBHOOK_SECRET)")
	f.StringVar(&e.bus, "events-bus", "", "put every execution status-change event on this EventBridge event bus (name or ARN), at the endpoint configured for events")
	f.StringVar(&e.file, "events-file", "", "append every execution status-change event to this file, a JSON object a line")
}

// deliverer builds the deliverer of the configured destinations; nil when
// there is none.
func (e *eventFlags) deliverer(ctx context.Context, cfg *config.Serve, exec store.Executor, met *metrics.Metrics, leads func(context.Context) bool, log *slog.Logger) (*notify.Deliverer, error) {
	var dests []notify.Destination
	secret := e.secret
	if secret == "" {
		secret = os.Getenv("STEPWISE_EVENTS_WEBHOOK_SECRET")
	}
	for _, raw := range e.webhooks {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("events-webhook %q: not an http or https URL", raw)
		}
		dests = append(dests, &notify.Webhook{URL: raw, Secret: []byte(secret)})
	}
	if e.bus != "" {
		ic := integration.Config{Region: cfg.Region, Account: cfg.Account, Endpoint: cfg.Integrations.AWSEndpoint, Endpoints: cfg.Integrations.Endpoints}
		awsCfg, endpoint, err := ic.AWSConfig(ctx, "events")
		if err != nil {
			return nil, err
		}
		client := eventbridge.NewFromConfig(awsCfg, func(o *eventbridge.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		})
		dests = append(dests, &notify.Bus{Bus: e.bus, Client: client})
	}
	if e.file != "" {
		dests = append(dests, &notify.File{Path: e.file})
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
