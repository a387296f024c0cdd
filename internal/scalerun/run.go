package scalerun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/benchproc"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// Config is one run.
type Config struct {
	// BinDir holds apiserver, controller-manager, scheduler and
	// hollow-nodes.
	BinDir string
	// WorkDir gets the run's data, certificates and logs (kept after the
	// run for reading).
	WorkDir string
	// Nodes hollow nodes, of which LoseNodes are lost at once.
	Nodes, LoseNodes int
	// Deployments of Replicas pods each.
	Deployments, Replicas int
	// Tuned lifts the limits (see the package doc); false runs the shipped
	// defaults.
	Tuned bool
	// TolerationSeconds of the pods for not-ready and unreachable nodes.
	TolerationSeconds int64
	// NodeEvictionRate, when set, is the controller-manager's
	// --node-eviction-rate (nodes per second; the shipped 0.1 evicts 1,000
	// lost nodes' pods in 10,000 s).
	NodeEvictionRate float64
	// Milestone bounds each milestone.
	Milestone time.Duration
	// StartConcurrency is how many hollow nodes may be in their start
	// phase at once, over both hollow-nodes processes (their
	// --start-concurrency, split in proportion to their nodes); 0 is
	// hollow-nodes' default, negative no bound (all nodes at once, the
	// runs before the ramp).
	StartConcurrency int
	// StartQPS, when positive, is how many hollow nodes begin starting per
	// second, over both processes (--start-qps, split likewise).
	StartQPS float64
}

// Milestone is one timed step.
type Milestone struct {
	Name    string
	Elapsed time.Duration
}

// ProcessStats are one process' figures at the end of the run.
type ProcessStats struct {
	Name       string
	CPUSeconds float64
	PeakMiB    float64
}

// Result is what a run measured.
type Result struct {
	Milestones []Milestone
	// P99 is the apiserver's request latency p99 per verb, in seconds,
	// with the number of requests.
	P99       map[string]float64
	Requests  map[string]float64
	Processes []ProcessStats
	// LostPods were on the lost nodes when they were lost.
	LostPods int
}

type run struct {
	cfg   Config
	c     *client.Client
	procs map[string]*benchproc.Process
	order []string
	// final are the figures of processes read before they were killed.
	final map[string]ProcessStats
}

// Run does the run and returns its figures; the daemons are stopped at the
// end.
func Run(ctx context.Context, cfg Config) (result *Result, runErr error) {
	if cfg.Nodes < 1 || cfg.LoseNodes < 0 || cfg.LoseNodes >= cfg.Nodes || cfg.Deployments < 1 || cfg.Replicas < 1 {
		return nil, fmt.Errorf("need nodes >= 1, 0 <= lose-nodes < nodes, deployments >= 1, replicas >= 1; got %d, %d, %d, %d",
			cfg.Nodes, cfg.LoseNodes, cfg.Deployments, cfg.Replicas)
	}
	if cfg.Milestone <= 0 {
		cfg.Milestone = 15 * time.Minute
	}
	if cfg.TolerationSeconds == 0 {
		cfg.TolerationSeconds = 30
	}
	r := &run{cfg: cfg, procs: map[string]*benchproc.Process{}}
	defer r.stopAll()
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	res := &Result{}
	// A failed milestone still reports what was measured up to it: the
	// request latencies and each process' CPU and peak RSS, read before
	// the processes are stopped.
	defer func() {
		if runErr != nil && res.Processes == nil {
			if err := r.collect(context.WithoutCancel(ctx), res); err != nil {
				slog.Warn("collecting the figures of the failed run", "err", err)
			}
		}
	}()
	step := func(name string, f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, cfg.Milestone)
		defer cancel()
		start := time.Now()
		if err := f(ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		m := Milestone{name, time.Since(start)}
		slog.Info("milestone", "name", name, "elapsed", m.Elapsed.Round(10*time.Millisecond))
		res.Milestones = append(res.Milestones, m)
		return nil
	}
	total := cfg.Deployments * cfg.Replicas
	kept := cfg.Nodes - cfg.LoseNodes
	if err := step(fmt.Sprintf("%d nodes Ready", cfg.Nodes), func(ctx context.Context) error {
		return r.poll(ctx, func(ctx context.Context) (bool, string, error) {
			ready, _, err := r.nodes(ctx)
			return ready == cfg.Nodes, fmt.Sprintf("%d Ready", ready), err
		})
	}); err != nil {
		return res, err
	}
	if err := step(fmt.Sprintf("%d Deployments x %d replicas applied, %d pods Running", cfg.Deployments, cfg.Replicas, total), func(ctx context.Context) error {
		if err := r.createDeployments(ctx); err != nil {
			return err
		}
		return r.poll(ctx, func(ctx context.Context) (bool, string, error) {
			running, err := r.runningPods(ctx)
			return running == total, fmt.Sprintf("%d Running", running), err
		})
	}); err != nil {
		return res, err
	}
	if err := step("rolling update of every Deployment, all updated and available", func(ctx context.Context) error {
		if err := r.rollDeployments(ctx); err != nil {
			return err
		}
		return r.poll(ctx, func(ctx context.Context) (bool, string, error) { return r.deploymentsDone(ctx, total) })
	}); err != nil {
		return res, err
	}
	if cfg.LoseNodes > 0 {
		onLost, err := r.podsOnLostNodes(ctx)
		if err != nil {
			return res, err
		}
		res.LostPods = onLost
		lost := r.procs["hollow-nodes-lost"]
		_, peak := benchproc.RSSMiB(lost.PID())
		r.final = map[string]ProcessStats{lost.Name: {lost.Name, benchproc.CPUSeconds(lost.PID()), peak}}
		lostAt := time.Now()
		lost.Kill()
		if err := step(fmt.Sprintf("%d nodes lost (SIGKILL): NotReady", cfg.LoseNodes), func(ctx context.Context) error {
			return r.poll(ctx, func(ctx context.Context) (bool, string, error) {
				ready, notReady, err := r.nodes(ctx)
				return ready == kept && notReady == cfg.LoseNodes, fmt.Sprintf("%d Ready, %d not", ready, notReady), err
			})
		}); err != nil {
			return res, err
		}
		if err := step("their pods evicted and rescheduled: every Deployment available again", func(ctx context.Context) error {
			return r.poll(ctx, func(ctx context.Context) (bool, string, error) {
				done, msg, err := r.deploymentsDone(ctx, total)
				if !done || err != nil {
					return done, msg, err
				}
				onLost, err := r.podsOnLostNodes(ctx)
				return onLost == 0, fmt.Sprintf("%d pods on lost nodes not evicted", onLost), err
			})
		}); err != nil {
			return res, err
		}
		res.Milestones = append(res.Milestones, Milestone{"nodes lost until every Deployment available again (total)", time.Since(lostAt)})
	}
	if err := r.collect(ctx, res); err != nil {
		return res, err
	}
	return res, nil
}

// collect reads the apiserver's request p99 per verb and each process' CPU
// seconds and peak RSS into res (a killed process' as read before).
func (r *run) collect(ctx context.Context, res *Result) error {
	for _, name := range r.order {
		if st, ok := r.final[name]; ok {
			res.Processes = append(res.Processes, st)
			continue
		}
		p := r.procs[name]
		_, peak := benchproc.RSSMiB(p.PID())
		res.Processes = append(res.Processes, ProcessStats{name, benchproc.CPUSeconds(p.PID()), peak})
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p99, n, err := r.requestP99(ctx)
	if err != nil {
		return err
	}
	res.P99, res.Requests = p99, n
	return nil
}

func (r *run) stopAll() {
	for i := len(r.order) - 1; i >= 0; i-- {
		r.procs[r.order[i]].Stop()
	}
}

func (r *run) startProc(name, bin string, args ...string) error {
	p, err := benchproc.Start(r.cfg.WorkDir, name, filepath.Join(r.cfg.BinDir, bin), args...)
	if err != nil {
		return err
	}
	r.procs[name] = p
	r.order = append(r.order, name)
	return nil
}

// start runs the apiserver, then the controllers and the hollow nodes.
func (r *run) start(ctx context.Context) error {
	cfg := r.cfg
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return err
	}
	ports := make([]int, 3)
	for i := range ports {
		p, err := benchproc.FreePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	pki, admin := filepath.Join(cfg.WorkDir, "pki"), filepath.Join(cfg.WorkDir, "admin.kubeconfig")
	args := []string{"--data-dir", filepath.Join(cfg.WorkDir, "etcd"), "--cert-dir", pki, "--write-kubeconfig", admin,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[0]),
		"--embedded-etcd-client-url", fmt.Sprintf("https://127.0.0.1:%d", ports[1]),
		"--embedded-etcd-peer-url", fmt.Sprintf("https://127.0.0.1:%d", ports[2]), "--log-level", "warn"}
	if cfg.Tuned {
		args = append(args, "--max-requests-inflight=0", "--max-mutating-requests-inflight=0")
	}
	if err := r.startProc("apiserver", "apiserver", args...); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := r.procs["apiserver"].Alive(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the apiserver did not answer within 2m (log %s)", r.procs["apiserver"].Log)
		}
		if r.c == nil {
			kc, err := kubeconfig.Load(admin)
			if err != nil {
				continue
			}
			cc, err := kc.ClientConfig("")
			if err != nil {
				return err
			}
			cc.QPS, cc.Burst = -1, 0
			if r.c, err = client.New(cc); err != nil {
				return err
			}
		}
		if _, err := r.c.Do(ctx, client.Request{Path: "/readyz"}); err == nil {
			break
		}
	}
	tuned := func(flags ...string) []string {
		if cfg.Tuned {
			return flags
		}
		return nil
	}
	cidr := "10.0.0.0/8"
	var evictionRate []string
	if cfg.NodeEvictionRate > 0 {
		evictionRate = []string{"--node-eviction-rate=" + strconv.FormatFloat(cfg.NodeEvictionRate, 'f', -1, 64)}
	}
	if err := r.startProc("controller-manager", "controller-manager", append([]string{
		"--kubeconfig", filepath.Join(pki, "controller-manager.kubeconfig"), "--leader-elect=false", "--secure-port=0",
		"--allocate-node-cidrs=true", "--cluster-cidr", cidr},
		append(tuned("--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-deployment-syncs=50", "--concurrent-replicaset-syncs=50"),
			evictionRate...)...)...); err != nil {
		return err
	}
	if err := r.startProc("scheduler", "scheduler", append([]string{
		"--kubeconfig", filepath.Join(pki, "scheduler.kubeconfig"), "--leader-elect=false", "--secure-port=0"},
		tuned("--kube-api-qps=1000", "--kube-api-burst=2000")...)...); err != nil {
		return err
	}
	hollow := func(name string, start, count int) error {
		port, err := benchproc.FreePort()
		if err != nil {
			return err
		}
		return r.startProc(name, "hollow-nodes", append([]string{"--kubeconfig", admin, "--count", strconv.Itoa(count),
			"--start-index", strconv.Itoa(start), "--health-addr", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "warn"},
			rampFlags(cfg, count)...)...)
	}
	if err := hollow("hollow-nodes", 0, cfg.Nodes-cfg.LoseNodes); err != nil {
		return err
	}
	if cfg.LoseNodes > 0 {
		if err := hollow("hollow-nodes-lost", cfg.Nodes-cfg.LoseNodes, cfg.LoseNodes); err != nil {
			return err
		}
	}
	return nil
}

// rampFlags are the start ramp flags of the hollow-nodes process of count
// of the run's nodes: its share of the run's StartConcurrency and
// StartQPS, so the two processes together keep to them and end their
// ramps about together.
func rampFlags(cfg Config, count int) []string {
	var out []string
	conc := cfg.StartConcurrency
	if conc == 0 {
		// hollow-nodes' default is the bound over both processes, as
		// the table says, not in each.
		conc = hollowDefaultStartConcurrency
	}
	switch {
	case conc < 0:
		out = append(out, "--start-concurrency=0")
	case conc > 0:
		out = append(out, "--start-concurrency="+strconv.Itoa(max(1, conc*count/cfg.Nodes)))
	}
	if cfg.StartQPS > 0 {
		share := cfg.StartQPS * float64(count) / float64(cfg.Nodes)
		out = append(out, "--start-qps="+strconv.FormatFloat(share, 'f', -1, 64))
	}
	return out
}

// poll calls f every second until it is done, fails, or ctx ends; every
// process must keep running meanwhile (but the lost hollow nodes).
func (r *run) poll(ctx context.Context, f func(context.Context) (bool, string, error)) error {
	last := ""
	for {
		for _, name := range r.order {
			if name == "hollow-nodes-lost" {
				continue
			}
			if err := r.procs[name].Alive(); err != nil {
				return err
			}
		}
		done, msg, err := f(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Warn("poll", "err", err)
		}
		if done && err == nil {
			return nil
		}
		if msg != last {
			slog.Info("progress", "state", msg)
			last = msg
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %s)", ctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

func (r *run) list(ctx context.Context, path string, q url.Values, out any) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set("resourceVersion", "0")
	body, err := r.c.Do(ctx, client.Request{Path: path, Query: q})
	if err != nil {
		return err
	}
	return json.Unmarshal(body, out)
}

// nodes counts the Ready nodes and the others.
func (r *run) nodes(ctx context.Context) (ready, notReady int, err error) {
	var l api.NodeList
	if err := r.list(ctx, "/api/v1/nodes", nil, &l); err != nil {
		return 0, 0, err
	}
	for _, n := range l.Items {
		ok := false
		for _, c := range n.Status.Conditions {
			ok = ok || c.Type == api.NodeReady && c.Status == api.ConditionTrue
		}
		if ok {
			ready++
		} else {
			notReady++
		}
	}
	return ready, notReady, nil
}

const namespace = "scale"

// runningPods counts the Running pods not being deleted (the pods of a
// lost node stay Running, terminating, until their node comes back or is
// deleted, as in Kubernetes).
func (r *run) runningPods(ctx context.Context) (int, error) {
	var l struct {
		Items []struct {
			Metadata struct {
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := r.list(ctx, "/api/v1/namespaces/"+namespace+"/pods", url.Values{"fieldSelector": {"status.phase=Running"}}, &l); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range l.Items {
		if p.Metadata.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}

// podsOnLostNodes counts the pods bound to the lost nodes and not evicted
// (marked for deletion).
func (r *run) podsOnLostNodes(ctx context.Context) (int, error) {
	var l api.PodList
	if err := r.list(ctx, "/api/v1/namespaces/"+namespace+"/pods", nil, &l); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if i, ok := strings.CutPrefix(p.Spec.NodeName, "hollow-node-"); ok {
			if idx, err := strconv.Atoi(i); err == nil && idx >= r.cfg.Nodes-r.cfg.LoseNodes {
				n++
			}
		}
	}
	return n, nil
}

func (r *run) createDeployments(ctx context.Context) error {
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, namespace)
	if _, err := r.c.Do(ctx, client.Request{Method: "POST", Path: "/api/v1/namespaces", Body: []byte(ns)}); err != nil {
		return err
	}
	for i := range r.cfg.Deployments {
		d := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d%d"},"spec":{"replicas":%d,
"selector":{"matchLabels":{"app":"d%d"}},"template":{"metadata":{"labels":{"app":"d%d"}},"spec":{
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":%d},
{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":%d}],
"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"10m","memory":"10Mi"}}}]}}}}`,
			i, r.cfg.Replicas, i, i, r.cfg.TolerationSeconds, r.cfg.TolerationSeconds)
		if _, err := r.c.Do(ctx, client.Request{Method: "POST", Path: "/apis/apps/v1/namespaces/" + namespace + "/deployments", Body: []byte(d)}); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) rollDeployments(ctx context.Context) error {
	patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"scale.minik8s.io/rolled":"1"}}}}}`)
	for i := range r.cfg.Deployments {
		if _, err := r.c.Do(ctx, client.Request{Method: "PATCH", Path: fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments/d%d", namespace, i),
			Body: patch, ContentType: "application/strategic-merge-patch+json"}); err != nil {
			return err
		}
	}
	return nil
}

// deploymentsDone: every Deployment observed, updated and available, with
// total pods Running.
func (r *run) deploymentsDone(ctx context.Context, total int) (bool, string, error) {
	var l api.DeploymentList
	if err := r.list(ctx, "/apis/apps/v1/namespaces/"+namespace+"/deployments", nil, &l); err != nil {
		return false, "", err
	}
	done := 0
	for _, d := range l.Items {
		want := int32(r.cfg.Replicas)
		s := d.Status
		if s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want {
			done++
		}
	}
	if done < len(l.Items) || len(l.Items) != r.cfg.Deployments {
		return false, fmt.Sprintf("%d of %d Deployments updated and available", done, r.cfg.Deployments), nil
	}
	running, err := r.runningPods(ctx)
	return running == total, fmt.Sprintf("every Deployment available, %d pods Running", running), err
}

// requestP99 reads apiserver_request_duration_seconds from /metrics and
// estimates each verb's p99 over all resources, as Prometheus'
// histogram_quantile does (linear within the bucket).
func (r *run) requestP99(ctx context.Context) (p99, count map[string]float64, err error) {
	body, err := r.c.Do(ctx, client.Request{Path: "/metrics", Accept: "text/plain"})
	if err != nil {
		return nil, nil, err
	}
	return parseP99(bytes.NewReader(body))
}

func parseP99(in io.Reader) (p99, count map[string]float64, err error) {
	buckets := map[string]map[float64]float64{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_duration_seconds_bucket{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		labels, value := rest[:end], strings.TrimSpace(rest[end+1:])
		var verb, le string
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			switch k {
			case "verb":
				verb = v
			case "le":
				le = v
			}
		}
		if verb == "" || le == "" || verb == "WATCH" || verb == "CONNECT" {
			continue
		}
		bound := math.Inf(1)
		if le != "+Inf" {
			if bound, err = strconv.ParseFloat(le, 64); err != nil {
				return nil, nil, fmt.Errorf("bucket le %q: %w", le, err)
			}
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("bucket value %q: %w", value, err)
		}
		if buckets[verb] == nil {
			buckets[verb] = map[float64]float64{}
		}
		buckets[verb][bound] += n
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	p99, count = map[string]float64{}, map[string]float64{}
	for verb, b := range buckets {
		bounds := make([]float64, 0, len(b))
		for le := range b {
			bounds = append(bounds, le)
		}
		sort.Float64s(bounds)
		total := b[bounds[len(bounds)-1]]
		count[verb] = total
		if total == 0 {
			continue
		}
		rank, prevBound, prevCount := 0.99*total, 0.0, 0.0
		for _, le := range bounds {
			if b[le] >= rank {
				if math.IsInf(le, 1) {
					p99[verb] = prevBound
				} else {
					p99[verb] = prevBound + (le-prevBound)*(rank-prevCount)/(b[le]-prevCount)
				}
				break
			}
			prevBound, prevCount = le, b[le]
		}
	}
	return p99, count, nil
}

// hollowDefaultStartConcurrency is hollow-nodes' --start-concurrency
// default (kubelet/hollow.DefaultStartConcurrency; a test keeps them
// equal, without making scale-run link the kubelet).
const hollowDefaultStartConcurrency = 100

// rampText says how the hollow nodes joined.
func rampText(cfg Config) string {
	var conc string
	switch {
	case cfg.StartConcurrency < 0:
		conc = "all at once"
	case cfg.StartConcurrency == 0:
		conc = fmt.Sprintf("at most %d at once (hollow-nodes' default)", hollowDefaultStartConcurrency)
	default:
		conc = fmt.Sprintf("at most %d at once", cfg.StartConcurrency)
	}
	if cfg.StartQPS > 0 {
		conc += fmt.Sprintf(", at most %g a second", cfg.StartQPS)
	}
	return conc + " (from start to registered with informers synced)"
}

// Write prints the result as a table.
func Write(out io.Writer, cfg Config, res *Result) {
	row := "shipped default flags"
	if cfg.Tuned {
		row = "tuned flags (apiserver in-flight limits off; controller-manager and scheduler QPS 1000, burst 2000; 50 deployment and replicaset syncs)"
	}
	fmt.Fprintf(out, "cluster-scale run: %d hollow nodes, %d Deployments x %d replicas, %d nodes lost; %s\n", cfg.Nodes, cfg.Deployments, cfg.Replicas, cfg.LoseNodes, row)
	fmt.Fprintf(out, "hollow nodes start %s\n", rampText(cfg))
	if cfg.LoseNodes > 0 {
		rate := "the shipped --node-eviction-rate 0.1"
		if cfg.NodeEvictionRate > 0 {
			rate = fmt.Sprintf("--node-eviction-rate %g (shipped: 0.1)", cfg.NodeEvictionRate)
		}
		fmt.Fprintf(out, "pods tolerate not-ready/unreachable for %d s; the controller-manager runs %s\n", cfg.TolerationSeconds, rate)
	}
	if cfg.LoseNodes > 0 {
		fmt.Fprintf(out, "pods on the lost nodes when they were lost: %d\n", res.LostPods)
	}
	fmt.Fprintln(out, "\nmilestone\telapsed")
	for _, m := range res.Milestones {
		fmt.Fprintf(out, "%s\t%.1f s\n", m.Name, m.Elapsed.Seconds())
	}
	fmt.Fprintln(out, "\napiserver request latency p99 by verb (WATCH, CONNECT excluded)\trequests")
	verbs := make([]string, 0, len(res.P99))
	for v := range res.Requests {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	for _, v := range verbs {
		fmt.Fprintf(out, "%s\t%.0f ms\t%.0f\n", v, res.P99[v]*1000, res.Requests[v])
	}
	fmt.Fprintln(out, "\nprocess\tCPU seconds\tpeak RSS")
	for _, p := range res.Processes {
		fmt.Fprintf(out, "%s\t%.1f\t%.0f MiB\n", p.Name, p.CPUSeconds, p.PeakMiB)
	}
}
