// Command stepwise runs Amazon States Language workflows.
package main

import (
	"os"

	"stepwise/cmd/stepwise/cli"
)

func main() {
	c := &cli.CLI{Out: os.Stdout, Err: os.Stderr}
	os.Exit(c.Execute(os.Args[1:]))
}
