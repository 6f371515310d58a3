package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"stepwise/server"
)

type clockCommand struct {
	*CommandBase
	endpoint string
	timeout  time.Duration
	to       string
}

func (c *clockCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clock",
		Short: "Show a server's execution time, or advance it (advance)",
		Long: `Show a running server's execution time: the clock its history timestamps,
Wait states, timeouts and schedules read. It is real time unless the server
runs with --time-skip or --wait-time-scale.

  stepwise clock --endpoint http://127.0.0.1:8083`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := c.call(cmd.Context(), http.MethodGet, nil)
			if err != nil {
				return err
			}
			c.print(resp)
			return nil
		},
	}
	c.flags(cmd)
	advance := &cobra.Command{
		Use:   "advance [DURATION] [--to TIME]",
		Short: "Advance a server's virtual clock by DURATION, or to TIME",
		Long: `Advance the virtual clock of a server started with --time-skip or
--wait-time-scale by DURATION (a Go duration: 24h, 90m, 1h30m) or to TIME
(RFC 3339: 2026-12-01T02:00:00Z). On the way, the timers of running
executions (Wait states, retry back-offs, timeouts) and the schedules'
slots fire in the order of their times, each slot once, at its own time:
advancing past 02:00 runs a nightly schedule's night, and the execution
it starts has 02:00 as its start date. The command returns once the clock
is there and what fell due on the way has run (under --time-skip, and at a
--wait-time-scale above 0, the clock waits, as when it skips, for tasks that
wait on a worker, a callback or a service, running at its own rate
meanwhile). Advances take turns: a DURATION counts from where the one
before left the clock. The clock never goes back; real time is not advanced.

  stepwise clock advance 24h
  stepwise clock advance --to 2026-12-01T02:00:00Z --endpoint http://127.0.0.1:8083`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := c.advanceRequest(args)
			if err != nil {
				return err
			}
			resp, err := c.call(cmd.Context(), http.MethodPost, req)
			if err != nil {
				return err
			}
			c.print(resp)
			return nil
		},
	}
	c.flags(advance)
	advance.Flags().StringVar(&c.to, "to", "", "the time to advance to, in RFC 3339 (2026-12-01T02:00:00Z)")
	cmd.AddCommand(advance)
	return cmd
}

func (c *clockCommand) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:8083", "the server's URL")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 10*time.Minute, "how long to wait for the server")
}

// advanceRequest is the request of `clock advance` ARGS --to.
func (c *clockCommand) advanceRequest(args []string) (*server.ClockRequest, error) {
	switch {
	case len(args) == 1 && c.to != "":
		return nil, &UsageError{"clock advance: give a DURATION or --to TIME, not both"}
	case len(args) == 1:
		if _, err := server.ParseAdvance(args[0]); err != nil {
			return nil, &UsageError{"clock advance: " + err.Error()}
		}
		return &server.ClockRequest{Advance: args[0]}, nil
	case c.to != "":
		if _, err := server.ParseClockTo(c.to); err != nil {
			return nil, &UsageError{"clock advance: --to: " + err.Error()}
		}
		return &server.ClockRequest{To: c.to}, nil
	}
	return nil, &UsageError{"clock advance: give a DURATION (24h) or --to TIME (2026-12-01T02:00:00Z)"}
}

// call sends a clock request (nil for a GET) to the server, signed when
// the environment names AWS credentials (a server with --credentials
// takes only signed ones).
func (c *clockCommand) call(ctx context.Context, method string, req *server.ClockRequest) (*server.ClockResponse, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return nil, err
		}
	}
	url := strings.TrimSuffix(c.endpoint, "/") + server.ClockPath
	hreq, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("--endpoint %q: %v", c.endpoint, err)}
	}
	if req != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		if err := signFor(ctx, server.ClockSigningName, hreq, body); err != nil {
			return nil, err
		}
	}
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s did not answer within --timeout %s", url, c.timeout)
		}
		return nil, fmt.Errorf("no server at %s (start one with `stepwise serve`): %w", c.endpoint, err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var resp server.ClockResponse
	if err := json.Unmarshal(data, &resp); err != nil || (resp.Now == nil && resp.Error == "") {
		return nil, fmt.Errorf("%s answered %s: %s", url, hresp.Status, strings.TrimSpace(string(data)))
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}

// print writes the clock's reading, and whether it is virtual.
func (c *clockCommand) print(resp *server.ClockResponse) {
	kind := "real time"
	if resp.Virtual {
		kind = "virtual"
	}
	fmt.Fprintf(c.Out, "%s (%s)\n", resp.Now.UTC().Format(time.RFC3339Nano), kind)
}
