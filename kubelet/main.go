// Command kubelet is minik8s's node agent: it registers its Node, runs the
// pods bound to it in containerd with CNI networking, reports their status,
// and serves their logs and exec over HTTPS.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/logging"
	"github.com/minik8s/minik8s/kubelet/app"
)

func main() {
	opts := app.DefaultOptions()
	fs := flag.NewFlagSet("kubelet", flag.ExitOnError)
	opts.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log, err := logging.New(opts.LogLevel, "kubelet")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelet:", err)
		os.Exit(2)
	}
	ctx, stop := daemon.SignalContext()
	defer stop()
	if err := app.Run(ctx, opts, log); err != nil {
		log.Error("kubelet exited", "err", err)
		os.Exit(1)
	}
}
