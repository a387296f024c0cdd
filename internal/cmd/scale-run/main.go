// Command scale-run is the cluster-scale run (internal/scalerun): the
// control plane and hollow nodes as separate processes, timed milestones,
// request latency and each process' CPU and peak RSS.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/minik8s/minik8s/internal/scalerun"
)

func main() {
	cfg := scalerun.Config{}
	flag.StringVar(&cfg.BinDir, "bin-dir", "bin", "Directory of apiserver, controller-manager, scheduler and hollow-nodes.")
	flag.StringVar(&cfg.WorkDir, "work-dir", "", "Directory of the run's data and logs (default: a new temporary directory, kept).")
	flag.IntVar(&cfg.Nodes, "nodes", 5000, "Hollow nodes.")
	flag.IntVar(&cfg.LoseNodes, "lose-nodes", 1000, "Hollow nodes lost at once (SIGKILL) after the rolling update; 0 skips that step.")
	flag.IntVar(&cfg.Deployments, "deployments", 100, "Deployments.")
	flag.IntVar(&cfg.Replicas, "replicas", 100, "Replicas of each Deployment.")
	flag.BoolVar(&cfg.Tuned, "tuned", false, "Tuned flags instead of the shipped defaults (see the package doc).")
	flag.Int64Var(&cfg.TolerationSeconds, "toleration-seconds", 30, "The pods' tolerationSeconds for not-ready and unreachable nodes.")
	flag.Float64Var(&cfg.NodeEvictionRate, "node-eviction-rate", 0, "The controller-manager's --node-eviction-rate (0: its shipped 0.1 nodes/s, which takes 10,000 s for 1,000 lost nodes).")
	flag.IntVar(&cfg.StartConcurrency, "start-concurrency", 0, "Hollow nodes in their start phase at once, over both hollow-nodes processes (0: hollow-nodes' default, 100; -1: all at once, as runs before the start ramp).")
	flag.Float64Var(&cfg.StartQPS, "start-qps", 0, "Hollow nodes beginning their start per second, over both processes (0: no limit).")
	flag.DurationVar(&cfg.Milestone, "milestone-timeout", 15*time.Minute, "Longest wait for each milestone.")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "scale-run: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if cfg.StartConcurrency < -1 {
		fmt.Fprintf(os.Stderr, "scale-run: --start-concurrency must be >= -1, got %d\n", cfg.StartConcurrency)
		os.Exit(2)
	}
	if math.IsNaN(cfg.StartQPS) || math.IsInf(cfg.StartQPS, 0) || cfg.StartQPS < 0 {
		fmt.Fprintf(os.Stderr, "scale-run: --start-qps must be a number >= 0, got %v\n", cfg.StartQPS)
		os.Exit(2)
	}
	if cfg.WorkDir == "" {
		d, err := os.MkdirTemp("", "minik8s-scale-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale-run:", err)
			os.Exit(1)
		}
		cfg.WorkDir = d
	}
	slog.Info("scale run", "workDir", cfg.WorkDir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := scalerun.Run(ctx, cfg)
	if res != nil {
		scalerun.Write(os.Stdout, cfg, res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale-run:", err)
		os.Exit(1)
	}
}
