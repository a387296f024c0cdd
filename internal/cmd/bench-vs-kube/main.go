// Command bench-vs-kube runs the same load on minik8s' apiserver and
// scheduler and on kube-apiserver and kube-scheduler v1.37 in one run and
// prints the figures side by side with ratios (package benchvskube).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/minik8s/minik8s/internal/benchvskube"
)

func main() {
	var cfg benchvskube.Config
	var oracleDir, binDir, tuned string
	flag.StringVar(&oracleDir, "oracle-dir", "", "directory of kube-apiserver and kube-scheduler (scripts/oracle.sh prints it)")
	flag.StringVar(&binDir, "bin", "bin", "directory of our apiserver and scheduler binaries")
	flag.StringVar(&cfg.Dir, "work-dir", "", "work directory kept after the run (default: a temporary one, removed)")
	flag.StringVar(&cfg.BaselineAPIServer, "baseline-apiserver", "", "another build of our apiserver, measured first in a column of its own (before/after in one run)")
	flag.BoolVar(&cfg.SkipKube, "skip-kube", false, "leave kube-apiserver and kube-scheduler out (no ratios)")
	flag.StringVar(&tuned, "tuned-flags", "--max-requests-inflight=0 --max-mutating-requests-inflight=0", "our apiserver's flags in the tuned row (empty: no tuned row)")
	flag.IntVar(&cfg.Pods, "pods", 8000, "pods created and listed")
	flag.IntVar(&cfg.SerialCreates, "serial-creates", 300, "of them, pods created by a single client")
	flag.IntVar(&cfg.Clients, "clients", 64, "clients creating the rest")
	flag.IntVar(&cfg.Lists, "lists", 20, "LISTs of each kind")
	flag.IntVar(&cfg.Watchers, "watchers", 1000, "concurrent watchers")
	flag.IntVar(&cfg.WatchEvents, "watch-events", 20, "events written while they watch")
	flag.DurationVar(&cfg.Settle, "settle", 5*time.Second, "idle time before the idle RSS is read")
	flag.IntVar(&cfg.Nodes, "nodes", 100, "nodes of the scheduler runs (0: no scheduler runs; 5000 for the cluster-scale figure)")
	var schedFlags string
	flag.StringVar(&schedFlags, "scheduler-flags", "", "flags given to both schedulers, e.g. \"--kube-api-qps=1000 --kube-api-burst=1000\" (default: as shipped, 50 requests/s)")
	flag.IntVar(&cfg.SchedPods, "sched-pods", 0, "pods per scheduler run (default: 10 per node)")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if oracleDir == "" {
		fmt.Fprintln(os.Stderr, "bench-vs-kube: --oracle-dir is required (make bench-vs-kube passes it)")
		os.Exit(2)
	}
	if cfg.SchedPods == 0 {
		cfg.SchedPods = 10 * cfg.Nodes
	}
	cfg.TunedFlags = strings.Fields(tuned)
	cfg.SchedulerFlags = strings.Fields(schedFlags)
	cfg.APIServer, cfg.Scheduler = filepath.Join(binDir, "apiserver"), filepath.Join(binDir, "scheduler")
	cfg.KubeAPIServer, cfg.KubeScheduler = filepath.Join(oracleDir, "kube-apiserver"), filepath.Join(oracleDir, "kube-scheduler")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := benchvskube.Run(ctx, cfg, os.Stdout); err != nil {
		slog.Error("bench-vs-kube failed", "err", err)
		os.Exit(1)
	}
}
