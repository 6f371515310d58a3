package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := DefaultServe()
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		change func(*Serve)
		msg    string
	}{
		{func(s *Serve) { s.Addr = "nowhere" }, `addr "nowhere": address nowhere: missing port in address`},
		{func(s *Serve) { s.DB = "" }, "db: a file path or :memory: is required"},
		{func(s *Serve) { s.Region = "mars" }, `region "mars": not a region name such as us-east-1`},
		{func(s *Serve) { s.Account = "12" }, `account "12": must be 12 digits`},
		{func(s *Serve) { s.WaitTimeScale = -1 }, "wait-time-scale -1: must not be negative"},
		{func(s *Serve) { s.PayloadLimit = 0 }, "payload-limit 0: must be positive"},
	} {
		s := DefaultServe()
		tc.change(&s)
		require.EqualError(t, s.Validate(), tc.msg)
	}
}
