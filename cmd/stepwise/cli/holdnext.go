package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// holdNextCommand is `stepwise hold-next SCHEDULE`: the schedule's next
// run is skipped, the ones after it fire.
type holdNextCommand struct {
	*CommandBase
	endpoint string
	group    string
	release  bool
	timeout  time.Duration
}

func (c *holdNextCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hold-next SCHEDULE",
		Short: "Skip a schedule's next run only (--release to take the hold back)",
		Long: `Hold the next run of a schedule of a running server: the next slot that
would fire does not, and is recorded as skipped (the console's schedule page
lists it); the slots after it fire as usual. Holding a schedule held already
changes nothing; --release takes the hold back, so the run fires after all.
The hold is kept in the store: a restart, or another node of a cluster, keeps
it. The command prints the run held.

  stepwise hold-next nightly
  stepwise hold-next nightly --group jobnets --endpoint http://127.0.0.1:8083
  stepwise hold-next nightly --release`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:8083", "the server's URL")
	cmd.Flags().StringVar(&c.group, "group", "default", "the schedule's group")
	cmd.Flags().BoolVar(&c.release, "release", false, "take the hold back: the next run fires")
	cmd.Flags().DurationVar(&c.timeout, "timeout", time.Minute, "how long to wait for the server")
	return cmd
}

func (c *holdNextCommand) run(ctx context.Context, name string) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	method := http.MethodPost
	if c.release {
		method = http.MethodDelete
	}
	u := strings.TrimSuffix(c.endpoint, "/") + "/schedules/" + url.PathEscape(name) + "/hold-next?groupName=" + url.QueryEscape(c.group)
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return &UsageError{fmt.Sprintf("--endpoint %q: %v", c.endpoint, err)}
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		if err := signFor(ctx, "scheduler", req, nil); err != nil {
			return err
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s did not answer within --timeout %s", c.endpoint, c.timeout)
		}
		return fmt.Errorf("no server at %s (start one with `stepwise serve`): %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	var out struct {
		HeldRun  *float64
		Released *bool
		Message  string
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("%s answered %s: %s", u, resp.Status, strings.TrimSpace(string(data)))
	}
	if resp.StatusCode != http.StatusOK {
		if out.Message == "" {
			return fmt.Errorf("%s answered %s: %s", u, resp.Status, strings.TrimSpace(string(data)))
		}
		return errors.New(out.Message)
	}
	switch {
	case out.HeldRun != nil:
		at := time.UnixMilli(int64(*out.HeldRun * 1000)).UTC()
		fmt.Fprintf(c.Out, "held: the run of %s at %s is skipped\n", name, at.Format(time.RFC3339))
	case out.Released != nil && *out.Released:
		fmt.Fprintf(c.Out, "released: the next run of %s fires\n", name)
	case out.Released != nil:
		fmt.Fprintf(c.Out, "%s was not held\n", name)
	default:
		return fmt.Errorf("%s answered %s: %s", u, resp.Status, strings.TrimSpace(string(data)))
	}
	return nil
}
