package cli

import (
	"log/slog"
	"net/http"

	"stepwise/awsjson"
	"stepwise/config"
	"stepwise/engine"
	"stepwise/service"
	"stepwise/store"
	"stepwise/teststate"
)

// newAPI builds the Step Functions API over a store and an engine.
func newAPI(cfg *config.Serve, drv store.Driver, eng *engine.Engine, log *slog.Logger) (http.Handler, error) {
	svc, err := service.New(drv, eng, service.Config{
		Region:       cfg.Region,
		Account:      cfg.Account,
		PayloadLimit: cfg.PayloadLimit,
	})
	if err != nil {
		return nil, err
	}
	svc.TestState = teststate.New(teststate.Config{
		Region: cfg.Region, Account: cfg.Account, PayloadLimit: cfg.PayloadLimit,
	}).TestState
	return awsjson.New(svc, log), nil
}
