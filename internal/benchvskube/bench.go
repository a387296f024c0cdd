package benchvskube

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/minik8s/minik8s/internal/benchproc"
)

// Config is what to run and how much load.
type Config struct {
	// Dir is the work directory (data, certificates, process logs);
	// empty: a new temporary directory, removed afterwards.
	Dir string
	// APIServer and Scheduler are our binaries; KubeAPIServer and
	// KubeScheduler the real ones.
	APIServer, Scheduler, KubeAPIServer, KubeScheduler string
	// BaselineAPIServer, if set, is another build of our apiserver (say,
	// of an earlier commit) measured first with the shipped flags, in a
	// column of its own: before and after in one run.
	BaselineAPIServer string
	// SkipKube leaves kube-apiserver and kube-scheduler out (no ratios).
	SkipKube bool
	// TunedFlags are the extra flags of our apiserver's second row; none:
	// no tuned row.
	TunedFlags []string
	// Pods is the number of pods created (and then listed); SerialCreates
	// of them by one client, the rest by Clients clients.
	Pods, SerialCreates, Clients int
	// Lists is the number of LISTs per kind of list.
	Lists int
	// Watchers and WatchEvents size the watch delivery measurement.
	Watchers, WatchEvents int
	// Settle is how long an apiserver idles before its idle RSS is read.
	Settle time.Duration
	// Nodes and SchedPods size the scheduler runs (0 Nodes: none).
	Nodes, SchedPods int
	// SchedulerFlags are given to both schedulers (none: as shipped, whose
	// client is limited to 50 requests/s, a bind and a status each pod).
	SchedulerFlags []string
}

// column names.
const (
	colBefore = "ours baseline"
	colOurs   = "ours"
	colTuned  = "ours tuned"
	colKube   = "kube"
)

// metric is one row: its label, unit and whether higher is better.
type metric struct {
	key, label   string
	higherBetter bool
}

// results holds every figure by row key and column.
type results map[string]map[string]float64

func (r results) set(key, col string, v float64) {
	if r[key] == nil {
		r[key] = map[string]float64{}
	}
	r[key][col] = v
}

// Run measures every apiserver and scheduler in turn and writes the table
// to out.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return err
		}
	} else {
		d, err := os.MkdirTemp("", "bench-vs-kube-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	tokenFile, err := writeTokenFile(cfg.Dir)
	if err != nil {
		return err
	}
	res := results{}
	type run struct {
		col   string
		start func() (*apiserver, error)
		sched bool
	}
	var runs []run
	if cfg.BaselineAPIServer != "" {
		runs = append(runs, run{colBefore, func() (*apiserver, error) {
			return startOurs(ctx, cfg.Dir, "apiserver-baseline", cfg.BaselineAPIServer, tokenFile, nil)
		}, false})
	}
	runs = append(runs, run{colOurs, func() (*apiserver, error) {
		return startOurs(ctx, cfg.Dir, "apiserver", cfg.APIServer, tokenFile, nil)
	}, true})
	if len(cfg.TunedFlags) > 0 {
		runs = append(runs, run{colTuned, func() (*apiserver, error) {
			return startOurs(ctx, cfg.Dir, "apiserver-tuned", cfg.APIServer, tokenFile, cfg.TunedFlags)
		}, false})
	}
	if !cfg.SkipKube {
		runs = append(runs, run{colKube, func() (*apiserver, error) {
			return startKube(ctx, cfg.Dir, cfg.KubeAPIServer, tokenFile)
		}, true})
	}
	var schedRows []metric
	for _, r := range runs {
		slog.Info("measuring", "apiserver", r.col)
		a, err := r.start()
		if err != nil {
			return err
		}
		err = measureAPIServer(ctx, cfg, a, r.col, res)
		if err == nil && r.sched && cfg.Nodes > 0 {
			schedRows, err = measureSchedulers(ctx, cfg, a, r.col, res)
		}
		a.cleanup()
		if err != nil {
			return fmt.Errorf("%s: %w", r.col, err)
		}
	}
	var cols []string
	if cfg.BaselineAPIServer != "" {
		cols = append(cols, colBefore)
	}
	cols = append(cols, colOurs)
	if len(cfg.TunedFlags) > 0 {
		cols = append(cols, colTuned)
	}
	if !cfg.SkipKube {
		cols = append(cols, colKube)
	}
	rows := []metric{
		{"idle-rss", "apiserver idle RSS (MiB)", false},
		{"idle-anon", "  of which anonymous (MiB)", false},
		{"create-1", "pod creates/s, 1 client", true},
		{"create-n", fmt.Sprintf("pod creates/s, %d clients", cfg.Clients), true},
		{"rss-pods", fmt.Sprintf("apiserver RSS after %d pods (MiB)", cfg.Pods), false},
		{"rss-pods-anon", "  of which anonymous (MiB)", false},
		{"list-rv0-p50", fmt.Sprintf("LIST %d pods rv=0 JSON p50 (ms)", cfg.Pods), false},
		{"list-rv0-p99", fmt.Sprintf("LIST %d pods rv=0 JSON p99 (ms)", cfg.Pods), false},
		{"list-rv0-mib", "LIST rv=0 JSON size (MiB)", false},
		{"list-pb-p50", fmt.Sprintf("LIST %d pods rv=0 protobuf p50 (ms)", cfg.Pods), false},
		{"list-pb-p99", fmt.Sprintf("LIST %d pods rv=0 protobuf p99 (ms)", cfg.Pods), false},
		{"list-cons-p50", fmt.Sprintf("LIST %d pods consistent JSON p50 (ms)", cfg.Pods), false},
		{"list-cons-p99", fmt.Sprintf("LIST %d pods consistent JSON p99 (ms)", cfg.Pods), false},
		{"rss-lists", "apiserver RSS after the lists (MiB)", false},
		{"watch-p50", fmt.Sprintf("watch delivery p50, %d watchers (ms)", cfg.Watchers), false},
		{"watch-p99", fmt.Sprintf("watch delivery p99, %d watchers (ms)", cfg.Watchers), false},
		{"watch-delivered", "watch events delivered (share)", true},
		{"rss-end", "apiserver RSS at the end (MiB)", false},
		{"rss-peak", "apiserver peak RSS (MiB)", false},
	}
	rows = append(rows, schedRows...)
	writeTable(out, cfg, rows, cols, res)
	return nil
}

func measureAPIServer(ctx context.Context, cfg Config, a *apiserver, col string, res results) error {
	pid := a.proc.PID()
	time.Sleep(cfg.Settle)
	rss, _ := benchproc.RSSMiB(pid)
	res.set("idle-rss", col, rss)
	res.set("idle-anon", col, benchproc.AnonMiB(pid))
	if err := setup(ctx, a); err != nil {
		return err
	}
	serial := min(cfg.SerialCreates, cfg.Pods)
	rate, err := createPods(ctx, a, benchToken, benchNamespace, "s", podTemplate, serial, 1)
	if err != nil {
		return err
	}
	res.set("create-1", col, rate)
	rate, err = createPods(ctx, a, benchToken, benchNamespace, "c", podTemplate, cfg.Pods-serial, cfg.Clients)
	if err != nil {
		return err
	}
	res.set("create-n", col, rate)
	time.Sleep(2 * time.Second)
	rss, _ = benchproc.RSSMiB(pid)
	res.set("rss-pods", col, rss)
	res.set("rss-pods-anon", col, benchproc.AnonMiB(pid))
	for _, l := range []struct{ key, query, accept string }{
		{"list-rv0", "?resourceVersion=0", ""},
		{"list-pb", "?resourceVersion=0", "application/vnd.kubernetes.protobuf"},
		{"list-cons", "", ""},
	} {
		p50, p99, mib, err := listLatency(ctx, a, l.query, l.accept, cfg.Lists, cfg.Pods)
		if err != nil {
			return err
		}
		res.set(l.key+"-p50", col, p50)
		res.set(l.key+"-p99", col, p99)
		res.set(l.key+"-mib", col, mib)
	}
	rss, _ = benchproc.RSSMiB(pid)
	res.set("rss-lists", col, rss)
	if cfg.Watchers > 0 {
		p50, p99, delivered, err := watchLatency(ctx, a, cfg.Watchers, cfg.WatchEvents)
		if err != nil {
			return err
		}
		res.set("watch-p50", col, p50)
		res.set("watch-p99", col, p99)
		res.set("watch-delivered", col, delivered)
	}
	rss, peak := benchproc.RSSMiB(pid)
	res.set("rss-end", col, rss)
	res.set("rss-peak", col, peak)
	slog.Info("measured", "apiserver", col, "figures", fmt.Sprint(res))
	return nil
}

// measureSchedulers runs our scheduler and kube-scheduler, one after the
// other, each on its own pending pods, against a (which holds Nodes Ready
// nodes, created here).
func measureSchedulers(ctx context.Context, cfg Config, a *apiserver, apiCol string, res results) ([]metric, error) {
	if err := createNodes(ctx, a, cfg.Nodes); err != nil {
		return nil, err
	}
	scheds := []struct{ col, name, bin string }{{colOurs, "scheduler", cfg.Scheduler}}
	if !cfg.SkipKube {
		scheds = append(scheds, struct{ col, name, bin string }{colKube, "kube-scheduler", cfg.KubeScheduler})
	}
	for i, s := range scheds {
		r, err := runScheduler(ctx, a, filepath.Dir(a.proc.Log), s.name, s.bin, fmt.Sprintf("sched-%d", i), cfg.SchedPods, cfg.SchedulerFlags)
		if err != nil {
			return nil, err
		}
		res.set("sched-rate-"+apiCol, s.col, r.podsPerSec)
		res.set("sched-cpu-"+apiCol, s.col, r.cpuMsPerPod)
		res.set("sched-peak-"+apiCol, s.col, r.peakMiB)
	}
	// Both apiservers' rows, in a fixed order.
	var rows []metric
	for _, c := range []struct{ col, on string }{{colOurs, "our apiserver"}, {colKube, "kube-apiserver"}} {
		rows = append(rows,
			metric{"sched-rate-" + c.col, fmt.Sprintf("scheduler pods/s, %d pods on %d nodes, on %s", cfg.SchedPods, cfg.Nodes, c.on), true},
			metric{"sched-cpu-" + c.col, fmt.Sprintf("scheduler CPU ms per pod, on %s", c.on), false},
			metric{"sched-peak-" + c.col, fmt.Sprintf("scheduler peak RSS (MiB), on %s", c.on), false})
	}
	return rows, nil
}

func writeTable(out io.Writer, cfg Config, rows []metric, cols []string, res results) {
	fmt.Fprintf(out, "\nbench-vs-kube: %d pods (%d created by 1 client, the rest by %d), %d lists each, %d watchers x %d events, scheduler %d pods on %d nodes\n",
		cfg.Pods, min(cfg.SerialCreates, cfg.Pods), cfg.Clients, cfg.Lists, cfg.Watchers, cfg.WatchEvents, cfg.SchedPods, cfg.Nodes)
	if cfg.BaselineAPIServer != "" {
		fmt.Fprintf(out, "ours baseline: %s with the shipped flags\n", cfg.BaselineAPIServer)
	}
	fmt.Fprintf(out, "ours: our apiserver as shipped (embedded etcd in its process and RSS); kube: kube-apiserver v1.37 (its etcd outside its RSS)\n")
	if len(cfg.TunedFlags) > 0 {
		fmt.Fprintf(out, "ours tuned: our apiserver with %s\n", strings.Join(cfg.TunedFlags, " "))
	}
	fmt.Fprintf(out, "lists: Go's client asks for gzip, as client-go does; kube-apiserver compresses lists, ours does not\n")
	fmt.Fprintf(out, "scheduler rows: ours = our scheduler, kube = kube-scheduler, on the apiserver named")
	if len(cfg.SchedulerFlags) > 0 {
		fmt.Fprintf(out, ", both with %s", strings.Join(cfg.SchedulerFlags, " "))
	}
	fmt.Fprintf(out, "\n\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c)
	}
	ratioCols := cols[:0:0]
	if !cfg.SkipKube {
		ratioCols = cols[:len(cols)-1]
	}
	for _, c := range ratioCols {
		fmt.Fprintf(tw, "%s/kube\t", c)
	}
	fmt.Fprintln(tw)
	for _, m := range rows {
		v, ok := res[m.key]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t", m.label)
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", num(v, c))
		}
		for _, c := range ratioCols {
			a, okA := v[c]
			k, okK := v[colKube]
			if okA && okK && k != 0 {
				fmt.Fprintf(tw, "%.2f\t", a/k)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nratios are ours/kube: above 1 is better for creates/s, pods/s and delivered, below 1 for latency, CPU and RSS")
}

func num(v map[string]float64, col string) string {
	x, ok := v[col]
	if !ok {
		return "-"
	}
	switch {
	case x == math.Trunc(x) && x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}
