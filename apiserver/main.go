// Command apiserver serves the minik8s API: Kubernetes paths and semantics,
// stored in embedded etcd (default) or an external etcd cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/logging"
)

func main() {
	opts := app.DefaultOptions()
	fs := flag.NewFlagSet("apiserver", flag.ExitOnError)
	opts.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log, err := logging.New(opts.LogLevel, "apiserver")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, opts, log); err != nil {
		log.Error("apiserver exited", "err", err)
		os.Exit(1)
	}
}
