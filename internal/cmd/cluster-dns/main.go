// Command cluster-dns is the cluster's DNS server, run as a Deployment in
// kube-system behind the kube-dns Service (see internal/clusterdns).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/minik8s/minik8s/internal/clusterdns"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/logging"
)

func main() {
	opts := clusterdns.DefaultOptions()
	fs := flag.NewFlagSet("cluster-dns", flag.ExitOnError)
	opts.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])
	log, err := logging.New(opts.LogLevel, "cluster-dns")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster-dns:", err)
		os.Exit(2)
	}
	ctx, stop := daemon.SignalContext()
	defer stop()
	if err := clusterdns.Run(ctx, opts, log); err != nil {
		log.Error("cluster-dns exited", "err", err)
		os.Exit(1)
	}
}
