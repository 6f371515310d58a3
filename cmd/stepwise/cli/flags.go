package cli

import (
	"time"

	"stepwise/config"
)

// daysValue is a duration flag that also takes whole days: 90d, 2160h.
type daysValue struct{ d *time.Duration }

func (v daysValue) String() string {
	if v.d == nil {
		return ""
	}
	return config.FormatDays(*v.d)
}

func (v daysValue) Set(s string) error {
	d, err := config.ParseDays(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (v daysValue) Type() string { return "duration" }
