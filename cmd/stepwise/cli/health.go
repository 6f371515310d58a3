package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// defaultHealthAddr is the address `stepwise health` asks without --addr
// or STEPWISE_ADDR: serve's default.
const defaultHealthAddr = "127.0.0.1:8083"

type healthCommand struct {
	*CommandBase
	addr    string
	timeout time.Duration
}

func (c *healthCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health [--addr HOST:PORT]",
		Short: "Check that a server on this machine is ready (exit status 0) or not (1)",
		Long: `Ask a server for its readiness (GET /readyz): exit status 0 when it answers
200, 1 otherwise, with the reason. The address is --addr, else
$STEPWISE_ADDR, else 127.0.0.1:8083, serve's own; an unspecified host
(0.0.0.0, [::] or none) is asked on 127.0.0.1. A container's health check
runs it:

  stepwise health
  stepwise health --addr 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.run(cmd.Context(), healthAddr(c.addr, os.Getenv))
		},
	}
	cmd.Flags().StringVar(&c.addr, "addr", "", "the server's address, HOST:PORT (default $STEPWISE_ADDR, else "+defaultHealthAddr+")")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

// healthAddr is the address to ask: the flag's, else $STEPWISE_ADDR's,
// else serve's default, with an unspecified host made 127.0.0.1.
func healthAddr(flag string, getenv func(string) string) string {
	addr := cmp.Or(flag, getenv("STEPWISE_ADDR"), defaultHealthAddr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr // run reports it
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func (c *healthCommand) run(ctx context.Context, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return &UsageError{fmt.Sprintf("health: the address %q is not HOST:PORT: %v", addr, err)}
	}
	if c.timeout <= 0 {
		return &UsageError{"health: --timeout must be positive"}
	}
	ctx, cancel := context.WithTimeout(cmp.Or(ctx, context.Background()), c.timeout)
	defer cancel()
	url := "http://" + addr + "/readyz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}} // never through a proxy from the environment
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health: not ready: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		fmt.Fprintf(c.Out, "ready (%s)\n", url)
		return nil
	}
	reason := strings.TrimSpace(string(body))
	var probe struct{ Status, Reason string }
	if json.Unmarshal(body, &probe) == nil && probe.Status != "" {
		reason = cmp.Or(probe.Reason, probe.Status)
	}
	return fmt.Errorf("health: not ready: GET %s answered %s: %s", url, resp.Status, cmp.Or(reason, "no reason given"))
}
