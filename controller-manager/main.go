// Command controller-manager runs minik8s's reconcile loops (replicaset,
// deployment, node lifecycle, garbage collector, namespace, endpoints, job)
// as API clients, under leader election.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/logging"
)

func main() {
	opts := app.DefaultOptions()
	fs := flag.NewFlagSet("controller-manager", flag.ExitOnError)
	opts.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log, err := logging.New(opts.LogLevel, "controller-manager")
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller-manager:", err)
		os.Exit(2)
	}
	ctx, stop := daemon.SignalContext()
	defer stop()
	if err := app.Run(ctx, opts, log); err != nil {
		log.Error("controller-manager exited", "err", err)
		os.Exit(1)
	}
}
