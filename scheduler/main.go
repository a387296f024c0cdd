// Command scheduler is minik8s's kube-scheduler: it watches pending pods
// and nodes, picks a node for each pod (filter, score) and records the
// choice with POST pods/NAME/binding, under leader election.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/logging"
	"github.com/minik8s/minik8s/scheduler/app"
)

func main() {
	opts := app.DefaultOptions()
	fs := flag.NewFlagSet("scheduler", flag.ExitOnError)
	opts.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log, err := logging.New(opts.LogLevel, "scheduler")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		os.Exit(2)
	}
	ctx, stop := daemon.SignalContext()
	defer stop()
	if err := app.Run(ctx, opts, log); err != nil {
		log.Error("scheduler exited", "err", err)
		os.Exit(1)
	}
}
