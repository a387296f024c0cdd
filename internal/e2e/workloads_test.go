package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/oracle"
)

// wlNS is the namespace of the workloads scenario.
const wlNS = "e2e-workloads"

// The node that joins during the scenario registers with two taints:
// joinTaint (NoExecute), which no pod of the scenario tolerates, and
// dedicatedTaint (NoSchedule), which only the DaemonSet and the Deployment
// drained off the node tolerate, so that the other parts' pods stay off a
// node that is drained and removed.
const (
	joinTaint      = "e2e.minik8s.io/joining"
	dedicatedTaint = "e2e.minik8s.io/dedicated"
)

// dedicatedToleration is the pod spec lines tolerating dedicatedTaint.
const dedicatedToleration = `      tolerations:
      - key: ` + dedicatedTaint + `
        operator: Exists
        effect: NoSchedule
`

// TestWorkloads is issue 16's end-to-end proof, four parts run side by side
// in one namespace (the longest, the CronJob's, waits for two minute
// marks), each driven with both kubectl-lite and the real kubectl:
//
//   - StatefulSet: the Kubernetes documentation's example (web, headless
//     Service nginx) comes up in order, with stable names, hostnames and
//     DNS records; scales to 4 and back to 2 in order; a deleted pod comes
//     back with its name and identity.
//   - DaemonSet: a pod on every node, none on a node joining with a taint
//     it does not tolerate, one there once the taint is gone; drain of that
//     node refuses to break a PodDisruptionBudget, then succeeds once the
//     budget allows it; the node leaves and its daemon pod goes with it.
//   - CronJob: runs every minute and keeps one successful Job.
//   - InClusterClient: a pod reads the API with its ServiceAccount's token
//     through client-go's rest.InClusterConfig and is refused what its
//     Role does not grant.
//
// The node that joins is a scaled compose node (service node), tainted so
// that only the DaemonSet's and the drained Deployment's pods go there: the
// base nodes other scenarios use are not tainted, cordoned or drained.
func TestWorkloads(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	w := &workloads{c: c, kubectl: oracle.Path(t, "kubectl")}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		w.removeJoinedNode(t, ctx)
		if _, err := c.Kubectl(ctx, "delete", "namespace", wlNS, "--ignore-not-found"); err != nil {
			t.Errorf("delete namespace %s: %v", wlNS, err)
		}
		// Everything the scenario made goes with its namespace, pods of
		// the node that left included.
		err := Poll(ctx, time.Second, "namespace "+wlNS+" gone", func(ctx context.Context) (bool, string, error) {
			out, err := c.Kubectl(ctx, "get", "namespace", wlNS, "--ignore-not-found")
			if err != nil {
				return false, "", Retry(err)
			}
			pods, _ := c.Kubectl(ctx, "get", "pods", "-n", wlNS, "-o", "wide")
			return strings.TrimSpace(out) == "", out + pods, nil
		})
		if err != nil {
			t.Error(err)
		}
		t.Logf("workloads scenario: %.1fs wall time, cleanup included", time.Since(start).Seconds())
	})

	var nodes api.List[api.Node]
	if err := c.KubectlJSON(ctx, &nodes, "get", "nodes"); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		w.base = append(w.base, n.Name)
	}
	sort.Strings(w.base)
	if len(w.base) < 2 {
		t.Fatalf("nodes %v: want the compose cluster's %d workers", w.base, workers)
	}
	w.apply(t, ctx, w.kubectl, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+wlNS+"\n")

	runParts(t, ctx, w.diagnose,
		part{"CronJob", w.cronJob},
		part{"StatefulSet", w.statefulSet},
		part{"DaemonSetAndDrain", w.daemonSetAndDrain},
		part{"InClusterClient", w.inClusterClient},
	)
	t.Logf("workloads scenario: parts done after %.1fs", time.Since(start).Seconds())
}

// workloads is the state the parts share.
type workloads struct {
	c *Cluster
	// kubectl is the real kubectl v1.37.
	kubectl string
	// base are the nodes present at the start (the compose workers).
	base []string
	// joined is the compose container (and node name) of the node that
	// joins during the scenario, once it exists.
	joined string
}

// lite is bin/kubectl-lite.
func (w *workloads) lite() string { return filepath.Join(w.c.Root, "bin", "kubectl-lite") }

// run runs kubectl-lite or the real kubectl (bin) with the admin kubeconfig.
func (w *workloads) run(ctx context.Context, bin string, args ...string) (string, error) {
	return w.c.Run(ctx, bin, append([]string{"--kubeconfig", w.c.Kubeconfig}, args...)...)
}

// must is run that fails t on an error.
func (w *workloads) must(t *testing.T, ctx context.Context, bin string, args ...string) string {
	t.Helper()
	out, err := w.run(ctx, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// getJSON decodes kubectl-lite get ... -o json into v.
func (w *workloads) getJSON(ctx context.Context, v any, args ...string) error {
	if err := w.c.KubectlJSON(ctx, v, append(args, "-n", wlNS)...); err != nil {
		return Retry(err)
	}
	return nil
}

// apply applies manifest with bin from its standard input; while the only
// refusal is the namespace's default ServiceAccount missing (the
// serviceaccount controller makes it a moment after the namespace), it
// tries again, as kube's e2e framework waits for it.
func (w *workloads) apply(t *testing.T, ctx context.Context, bin, manifest string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out string
	err := Poll(ctx, time.Second, "apply", func(ctx context.Context) (bool, string, error) {
		var err error
		out, err = w.c.RunInput(ctx, []byte(manifest), bin, "--kubeconfig", w.c.Kubeconfig, "apply", "-f", "-")
		if err != nil && strings.Contains(err.Error(), `serviceaccount "default" not found`) {
			return false, "", Retry(err)
		}
		return err == nil, "", err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// within polls cond every second for up to d, logging how long it took.
func within(t *testing.T, ctx context.Context, d time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	if err := Poll(ctx, time.Second, what, cond); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after %.1fs", what, time.Since(start).Seconds())
}

// podsOf lists the scenario's pods matching selector.
func (w *workloads) podsOf(ctx context.Context, selector string) ([]api.Pod, error) {
	var l api.List[api.Pod]
	if err := w.getJSON(ctx, &l, "get", "pods", "-l", selector); err != nil {
		return nil, err
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items, nil
}

// --- StatefulSet -----------------------------------------------------------

// statefulSetManifest is the Kubernetes documentation's StatefulSet example
// (concepts/workloads/controllers/statefulset) with the workload image for
// nginx and without its volumeClaimTemplates (claims are created but no
// volume binds them yet), plus a readiness probe so that Ready means
// serving.
const statefulSetManifest = `apiVersion: v1
kind: Service
metadata:
  name: nginx
  namespace: ` + wlNS + `
  labels:
    app: nginx
spec:
  ports:
  - port: 80
    targetPort: 8080
    name: web
  clusterIP: None
  selector:
    app: nginx
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: ` + wlNS + `
spec:
  selector:
    matchLabels:
      app: nginx
  serviceName: "nginx"
  replicas: 2
  minReadySeconds: 0
  template:
    metadata:
      labels:
        app: nginx
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: nginx
        image: minik8s/busybox:latest
        imagePullPolicy: IfNotPresent
        ports:
        - containerPort: 8080
          name: web
        readinessProbe:
          httpGet:
            path: /
            port: web
          periodSeconds: 1
`

// podEvent is one event of a pod watch, reduced to what ordering needs.
type podEvent struct {
	typ      string
	name     string
	uid      string
	ready    bool
	deleting bool
}

func (w *workloads) statefulSet(t *testing.T, ctx context.Context) {
	// The real kubectl watches the set's pods from before they exist: the
	// order of its events is the order the controller acted in.
	watchOut := filepath.Join(t.TempDir(), "watch.json")
	stopWatch := w.watchPods(t, ctx, "app=nginx", watchOut)
	out := w.apply(t, ctx, w.kubectl, statefulSetManifest)
	if !strings.Contains(out, "statefulset.apps/web created") || !strings.Contains(out, "service/nginx created") {
		t.Fatalf("kubectl apply printed %q", out)
	}
	w.must(t, ctx, w.lite(), "rollout", "status", "statefulset/web", "-n", wlNS, "--timeout=120s")
	w.waitSet(t, ctx, 2)
	w.checkIdentity(t, ctx, 2)

	// Up with the real kubectl, down with kubectl-lite.
	w.must(t, ctx, w.kubectl, "scale", "statefulset/web", "-n", wlNS, "--replicas=4")
	w.must(t, ctx, w.kubectl, "rollout", "status", "statefulset/web", "-n", wlNS, "--timeout=120s")
	w.waitSet(t, ctx, 4)
	w.checkIdentity(t, ctx, 4)
	w.must(t, ctx, w.lite(), "scale", "statefulset/web", "-n", wlNS, "--replicas=2")
	w.waitSet(t, ctx, 2)

	// A deleted pod comes back under its name, with its hostname and DNS
	// record, as a new pod.
	var old api.Pod
	if err := w.getJSON(ctx, &old, "get", "pod", "web-0"); err != nil {
		t.Fatal(err)
	}
	w.must(t, ctx, w.lite(), "delete", "pod", "web-0", "-n", wlNS)
	w.waitSet(t, ctx, 2)
	var again api.Pod
	if err := w.getJSON(ctx, &again, "get", "pod", "web-0"); err != nil {
		t.Fatal(err)
	}
	if again.UID == old.UID {
		t.Fatalf("web-0 is still the pod %s after its deletion", old.UID)
	}
	w.checkIdentity(t, ctx, 2)

	// The table both print.
	for _, bin := range []string{w.lite(), w.kubectl} {
		out := w.must(t, ctx, bin, "get", "statefulset", "web", "-n", wlNS)
		if f := strings.Fields(out); len(f) < 6 || f[0] != "NAME" || f[3] != "web" || f[4] != "2/2" {
			t.Errorf("%s get statefulset web:\n%s\nwant web 2/2", filepath.Base(bin), out)
		}
	}

	events := stopWatch()
	w.checkOrder(t, events)
}

// waitSet waits until the set has exactly n pods web-0..web-(n-1), all
// Running, Ready and not being deleted, and its status says so.
func (w *workloads) waitSet(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	within(t, ctx, 2*time.Minute, fmt.Sprintf("StatefulSet web: %d ready pods web-0..web-%d", n, n-1), func(ctx context.Context) (bool, string, error) {
		pods, err := w.podsOf(ctx, "app=nginx")
		if err != nil {
			return false, "", err
		}
		var names []string
		for _, p := range pods {
			if p.DeletionTimestamp != nil || !running(p) || !podReady(p) {
				return false, describe(pods), nil
			}
			names = append(names, p.Name)
		}
		var want []string
		for i := range n {
			want = append(want, fmt.Sprintf("web-%d", i))
		}
		if !slices.Equal(names, want) {
			return false, describe(pods), nil
		}
		var set api.StatefulSet
		if err := w.getJSON(ctx, &set, "get", "statefulset", "web"); err != nil {
			return false, "", err
		}
		st := set.Status
		return st.ObservedGeneration == set.Generation && st.Replicas == int32(n) && st.ReadyReplicas == int32(n) &&
				st.AvailableReplicas == int32(n) && st.CurrentReplicas == int32(n) && st.UpdatedReplicas == int32(n),
			fmt.Sprintf("status %+v (generation %d)", st, set.Generation), nil
	})
}

// checkIdentity checks the stable network identity of web-0..web-(n-1):
// hostname and subdomain, the endpoint's hostname in the headless
// Service's slices, the name the pod's own hostname -f gives, and
// WEB-I.nginx.NS.svc.cluster.local resolving to its IP from another pod of
// the set.
func (w *workloads) checkIdentity(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	pods, err := w.podsOf(ctx, "app=nginx")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != n {
		t.Fatalf("%s, want %d", describe(pods), n)
	}
	for i, p := range pods {
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "nginx" {
			t.Errorf("pod %s has hostname %q and subdomain %q, want %s and nginx", p.Name, p.Spec.Hostname, p.Spec.Subdomain, p.Name)
		}
		if p.Labels["statefulset.kubernetes.io/pod-name"] != p.Name || p.Labels["apps.kubernetes.io/pod-index"] != fmt.Sprint(i) {
			t.Errorf("pod %s has labels %v, want statefulset.kubernetes.io/pod-name=%s and apps.kubernetes.io/pod-index=%d", p.Name, p.Labels, p.Name, i)
		}
	}
	within(t, ctx, 30*time.Second, fmt.Sprintf("headless Service nginx's endpoints carry the hostnames of %d pods", n), func(ctx context.Context) (bool, string, error) {
		var l api.List[api.EndpointSlice]
		if err := w.getJSON(ctx, &l, "get", "endpointslices", "-l", api.LabelServiceName+"=nginx"); err != nil {
			return false, "", err
		}
		got := map[string]string{}
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Hostname != nil && len(e.Addresses) > 0 && e.Conditions.Ready != nil && *e.Conditions.Ready {
					got[*e.Hostname] = e.Addresses[0]
				}
			}
		}
		for _, p := range pods {
			if got[p.Name] != p.Status.PodIP {
				return false, fmt.Sprintf("endpoint hostnames %v, pods %s", got, describe(pods)), nil
			}
		}
		return len(got) == n, fmt.Sprintf("endpoint hostnames %v", got), nil
	})
	for i, p := range pods {
		fqdn := fmt.Sprintf("%s.nginx.%s.svc.cluster.local", p.Name, wlNS)
		out, err := w.run(ctx, w.lite(), "exec", "-n", wlNS, p.Name, "--", "hostname", "-f")
		if err != nil || strings.TrimSpace(out) != fqdn {
			t.Errorf("hostname -f in %s: %q, %v; want %s", p.Name, out, err, fqdn)
		}
		// Asked from the next pod of the set, through cluster DNS.
		from := pods[(i+1)%len(pods)].Name
		within(t, ctx, 30*time.Second, fmt.Sprintf("nslookup %s in %s answering %s", fqdn, from, p.Status.PodIP), func(ctx context.Context) (bool, string, error) {
			out, err := w.run(ctx, w.kubectl, "exec", "-n", wlNS, from, "--", "nslookup", fqdn)
			if err != nil {
				return false, "", Retry(err)
			}
			addrs := nslookupAddresses(out)
			return slices.Equal(addrs, []string{p.Status.PodIP}), fmt.Sprintf("answers %v: %q", addrs, out), nil
		})
	}
}

// nslookupAddresses are the addresses of busybox nslookup's answer (the
// lines after the Name: line).
func nslookupAddresses(out string) []string {
	var addrs []string
	named := false
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Name:") {
			named = true
		}
		if a, ok := strings.CutPrefix(l, "Address:"); ok && named {
			addrs = append(addrs, strings.TrimSpace(a))
		}
	}
	sort.Strings(addrs)
	return slices.Compact(addrs)
}

// watchPods starts the real kubectl watching the scenario's pods matching
// selector into file; the function it returns stops the watch and returns
// the events.
func (w *workloads) watchPods(t *testing.T, ctx context.Context, selector, file string) func() []podEvent {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(wctx, w.kubectl, "--kubeconfig", w.c.Kubeconfig, "get", "pods", "-n", wlNS, "-l", selector,
		"--watch", "--output-watch-events", "-o", "json")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stopped := false
	stop := func() []podEvent {
		if !stopped {
			stopped = true
			cancel()
			<-done
			f.Close()
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		events, err := decodePodEvents(b)
		if err != nil {
			t.Fatalf("kubectl get pods --watch: %v (stderr %q)", err, stderr.String())
		}
		return events
	}
	t.Cleanup(func() { stop() })
	return stop
}

func decodePodEvents(b []byte) ([]podEvent, error) {
	var events []podEvent
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var ev struct {
			Type   string  `json:"type"`
			Object api.Pod `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return events, nil
			}
			// The watch was killed: a last event may be cut short.
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return events, nil
			}
			return events, fmt.Errorf("decode watch event %d: %w", len(events)+1, err)
		}
		p := ev.Object
		events = append(events, podEvent{typ: ev.Type, name: p.Name, uid: string(p.UID),
			ready: podReady(p) && p.DeletionTimestamp == nil, deleting: p.DeletionTimestamp != nil || ev.Type == "DELETED"})
	}
}

// checkOrder reads OrderedReady's promises in the watch events: web-(i+1)
// is created only once web-i is Ready (scale up to 2, then 4), web-2
// starts terminating only once web-3 is gone (scale down to 2), and the
// deleted web-0 comes back as a new pod of the same name.
func (w *workloads) checkOrder(t *testing.T, events []podEvent) {
	t.Helper()
	first := func(name string, match func(podEvent) bool) int {
		for i, e := range events {
			if e.name == name && match(e) {
				return i
			}
		}
		return -1
	}
	seen := func(podEvent) bool { return true }
	ready := func(e podEvent) bool { return e.ready }
	deleting := func(e podEvent) bool { return e.deleting }
	gone := func(e podEvent) bool { return e.typ == "DELETED" }
	var trace []string
	for _, e := range events {
		trace = append(trace, fmt.Sprintf("%s %s ready=%t deleting=%t", e.typ, e.name, e.ready, e.deleting))
	}
	t.Logf("%d watch events", len(events))
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format+"; watch events:\n%s", append(args, strings.Join(trace, "\n"))...)
	}
	for i := range 3 {
		prev, next := fmt.Sprintf("web-%d", i), fmt.Sprintf("web-%d", i+1)
		r, c := first(prev, ready), first(next, seen)
		if r < 0 || c < 0 || c < r {
			fail("%s first seen at event %d, %s first Ready at %d: want it created after", next, c, prev, r)
		}
	}
	d3, gone3, d2 := first("web-3", deleting), first("web-3", gone), first("web-2", deleting)
	if d3 < 0 || gone3 < 0 || d2 < 0 || d2 < gone3 {
		fail("scale down: web-3 terminating at event %d and gone at %d, web-2 terminating at %d: want web-3 gone before web-2 terminates", d3, gone3, d2)
	}
	if first("web-1", deleting) >= 0 || first("web-0", deleting) < d2 {
		fail("web-1 must stay and web-0 be deleted only at the end")
	}
	uids := map[string]bool{}
	for _, e := range events {
		if e.name == "web-0" {
			uids[e.uid] = true
		}
	}
	if len(uids) != 2 {
		fail("web-0 had %d incarnations, want 2 (the deleted pod and its replacement)", len(uids))
	}
}

// --- DaemonSet and drain ---------------------------------------------------

const daemonSetManifest = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: ` + wlNS + `
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
` + dedicatedToleration + `      terminationGracePeriodSeconds: 1
      containers:
      - name: agent
        image: minik8s/busybox:latest
        imagePullPolicy: IfNotPresent
        command: ["sleep", "86400"]
`

// guardedManifest is a Deployment whose pods go where the label
// e2e.minik8s.io/guarded=true is, behind a budget that wants one available.
const guardedManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: guarded
  namespace: ` + wlNS + `
spec:
  replicas: 1
  selector:
    matchLabels:
      app: guarded
  template:
    metadata:
      labels:
        app: guarded
    spec:
      nodeSelector:
        e2e.minik8s.io/guarded: "true"
` + dedicatedToleration + `      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: minik8s/busybox:latest
        imagePullPolicy: IfNotPresent
        readinessProbe:
          httpGet:
            path: /
            port: 8080
          periodSeconds: 1
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: guarded
  namespace: ` + wlNS + `
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: guarded
`

// agents waits until the DaemonSet agent has exactly one Running pod on
// each of nodes and none elsewhere, and its status counts them.
func (w *workloads) agents(t *testing.T, ctx context.Context, nodes []string) {
	t.Helper()
	within(t, ctx, 2*time.Minute, fmt.Sprintf("DaemonSet agent: one Running pod on each of %v", nodes), func(ctx context.Context) (bool, string, error) {
		pods, err := w.podsOf(ctx, "app=agent")
		if err != nil {
			return false, "", err
		}
		var on []string
		for _, p := range pods {
			if p.DeletionTimestamp != nil || !running(p) {
				return false, describe(pods), nil
			}
			on = append(on, p.Spec.NodeName)
		}
		sort.Strings(on)
		if !slices.Equal(on, nodes) {
			return false, describe(pods), nil
		}
		var ds api.DaemonSet
		if err := w.getJSON(ctx, &ds, "get", "daemonset", "agent"); err != nil {
			return false, "", err
		}
		n, st := int32(len(nodes)), ds.Status
		return st.ObservedGeneration == ds.Generation && st.DesiredNumberScheduled == n && st.CurrentNumberScheduled == n &&
				st.NumberReady == n && st.UpdatedNumberScheduled == n && st.NumberMisscheduled == 0,
			fmt.Sprintf("status %+v", st), nil
	})
}

func (w *workloads) daemonSetAndDrain(t *testing.T, ctx context.Context) {
	out := w.apply(t, ctx, w.lite(), daemonSetManifest)
	if !strings.Contains(out, "daemonset.apps/agent created") {
		t.Fatalf("kubectl-lite apply printed %q", out)
	}
	w.agents(t, ctx, w.base)

	// A node joins with a taint the DaemonSet does not tolerate.
	node := w.joinNode(t, ctx)
	var n api.Node
	if err := w.c.KubectlJSON(ctx, &n, "get", "node", node); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(n.Spec.Taints, func(tt api.Taint) bool { return tt.Key == joinTaint && tt.Effect == api.TaintEffectNoExecute }) ||
		!slices.ContainsFunc(n.Spec.Taints, func(tt api.Taint) bool { return tt.Key == dedicatedTaint && tt.Effect == api.TaintEffectNoSchedule }) {
		t.Fatalf("node %s has taints %+v, want %s:NoExecute and %s:NoSchedule", node, n.Spec.Taints, joinTaint, dedicatedTaint)
	}
	// The controller saw the node (it is Ready, which takes it seconds
	// after registering) and left it alone: still one pod per base node,
	// over a few more seconds.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := w.podsOf(ctx, "app=agent")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if p.Spec.NodeName == node {
				t.Fatalf("DaemonSet pod %s on node %s, whose taint %s:NoExecute it does not tolerate", p.Name, node, joinTaint)
			}
		}
		time.Sleep(time.Second)
	}
	w.agents(t, ctx, w.base)

	// The taint goes: the node gets its daemon pod.
	out = w.must(t, ctx, w.lite(), "taint", "node", node, joinTaint+"-")
	if !strings.Contains(out, "node/"+node+" untainted") {
		t.Errorf("kubectl-lite taint printed %q", out)
	}
	all := append(slices.Clone(w.base), node)
	sort.Strings(all)
	w.agents(t, ctx, all)
	out = w.must(t, ctx, w.kubectl, "rollout", "status", "daemonset/agent", "-n", wlNS, "--timeout=60s")
	if !strings.Contains(out, `daemon set "agent" successfully rolled out`) {
		t.Errorf("kubectl rollout status daemonset/agent printed %q", out)
	}

	w.drain(t, ctx, node)

	// The node leaves: its daemon pod goes with it.
	w.removeJoinedNode(t, ctx)
	w.agents(t, ctx, w.base)
}

// joinNode starts one more compose node (service node) registering with
// joinTaint and dedicatedTaint, loads the workload image into it and waits until it is Ready.
func (w *workloads) joinNode(t *testing.T, ctx context.Context) string {
	t.Helper()
	env := "KUBELET_EXTRA_ARGS=--register-with-taints=" + joinTaint + "=true:NoExecute," + dedicatedTaint + "=workloads:NoSchedule"
	cmd := exec.CommandContext(ctx, w.c.Compose[0], append(w.c.Compose[1:], "up", "-d", "--no-recreate", "--scale", "node=1", "node")...)
	cmd.Dir = w.c.Root
	cmd.Env = append(os.Environ(), "COMPOSE_PROJECT_NAME="+w.c.Project, env)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compose up --scale node=1: %v: %s", err, out)
	}
	id, err := w.c.Container(ctx, "node")
	if err != nil {
		t.Fatal(err)
	}
	// The node is named after its hostname, the container's short ID.
	w.joined = id[:12]
	if _, err := w.c.Run(ctx, filepath.Join(w.c.Root, "scripts", "load-image.sh"), "minik8s/busybox:latest", w.joined); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 2*time.Minute, "node "+w.joined+" Ready", func(ctx context.Context) (bool, string, error) {
		var n api.Node
		if err := w.c.KubectlJSON(ctx, &n, "get", "node", w.joined); err != nil {
			return false, "", Retry(err)
		}
		return ready(n) && n.Spec.PodCIDR != "" && len(conditionTaints(n)) == 0,
			fmt.Sprintf("podCIDR %q, taints %+v, conditions %+v", n.Spec.PodCIDR, n.Spec.Taints, n.Status.Conditions), nil
	})
	return w.joined
}

// removeJoinedNode stops and removes the joined node's container and
// deletes its Node, as an administrator retires a machine.
func (w *workloads) removeJoinedNode(t *testing.T, ctx context.Context) {
	t.Helper()
	if w.joined == "" {
		return
	}
	node := w.joined
	w.joined = ""
	if _, err := w.c.Run(ctx, "docker", "rm", "-f", "-v", node); err != nil {
		t.Errorf("remove node container %s: %v", node, err)
	}
	if _, err := w.c.Kubectl(ctx, "delete", "node", node, "--ignore-not-found"); err != nil {
		t.Errorf("delete node %s: %v", node, err)
	}
}

// drain puts the guarded Deployment's one pod on node behind a budget
// wanting one available: drain (kubectl-lite, then the real kubectl, with a
// short --timeout) refuses to evict it and says so as kubectl does; with a
// second replica ready elsewhere, kubectl-lite's drain succeeds. The node
// is uncordoned again.
func (w *workloads) drain(t *testing.T, ctx context.Context, node string) {
	t.Helper()
	w.must(t, ctx, w.lite(), "label", "node", node, "e2e.minik8s.io/guarded=true")
	w.apply(t, ctx, w.kubectl, guardedManifest)
	w.must(t, ctx, w.lite(), "rollout", "status", "deployment/guarded", "-n", wlNS, "--timeout=120s")
	pods, err := w.podsOf(ctx, "app=guarded")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].Spec.NodeName != node {
		t.Fatalf("guarded: %s, want one pod on %s", describe(pods), node)
	}
	victim := pods[0].Name
	within(t, ctx, time.Minute, "budget guarded allows no disruption", func(ctx context.Context) (bool, string, error) {
		var pdb api.PodDisruptionBudget
		if err := w.getJSON(ctx, &pdb, "get", "pdb", "guarded"); err != nil {
			return false, "", err
		}
		st := pdb.Status
		return st.ObservedGeneration == pdb.Generation && st.CurrentHealthy == 1 && st.DesiredHealthy == 1 && st.ExpectedPods == 1 && st.DisruptionsAllowed == 0,
			fmt.Sprintf("status %+v", st), nil
	})

	refusal := fmt.Sprintf("error when evicting pods/%q -n %q (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.", victim, wlNS)
	timeout := fmt.Sprintf("error when evicting pods/%q -n %q: global timeout reached: 6s", victim, wlNS)
	var stderrs [2]string
	for i, bin := range []string{w.lite(), w.kubectl} {
		start := time.Now()
		out, err := w.run(ctx, bin, "drain", node, "--ignore-daemonsets", "--timeout=6s")
		var ce *CommandError
		if !errors.As(err, &ce) {
			t.Fatalf("%s drain %s with the budget spent: %v, want it to fail; output:\n%s", filepath.Base(bin), node, err, out)
		}
		stderrs[i] = strings.TrimSuffix(ce.Stderr, out)
		t.Logf("%s drain refused after %.1fs:\n%s", filepath.Base(bin), time.Since(start).Seconds(), ce.Stderr)
		for _, want := range []string{refusal, timeout, "There are pending nodes to be drained:\n " + node + "\n"} {
			if !strings.Contains(stderrs[i], want) {
				t.Errorf("%s drain: standard error\n%s\nwant %q", filepath.Base(bin), stderrs[i], want)
			}
		}
	}
	// Apart from how many times it retried, kubectl-lite says what kubectl says.
	if a, b := distinctLines(stderrs[0]), distinctLines(stderrs[1]); !slices.Equal(a, b) {
		t.Errorf("drain's standard error differs:\nkubectl-lite:\n%s\nkubectl:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if p, err := w.podsOf(ctx, "app=guarded"); err != nil || len(p) != 1 || p[0].Name != victim || p[0].DeletionTimestamp != nil {
		t.Fatalf("after the refused drains: %s, %v; want %s untouched", describe(p), err, victim)
	}

	// A second replica on a base node (the drained one is cordoned) makes
	// room in the budget.
	other := w.base[0]
	w.must(t, ctx, w.lite(), "label", "node", other, "e2e.minik8s.io/guarded=true")
	defer func() {
		if _, err := w.run(context.Background(), w.lite(), "label", "node", other, "e2e.minik8s.io/guarded-"); err != nil {
			t.Errorf("unlabel node %s: %v", other, err)
		}
	}()
	w.must(t, ctx, w.kubectl, "scale", "deployment/guarded", "-n", wlNS, "--replicas=2")
	within(t, ctx, 2*time.Minute, "budget guarded allows one disruption", func(ctx context.Context) (bool, string, error) {
		var pdb api.PodDisruptionBudget
		if err := w.getJSON(ctx, &pdb, "get", "pdb", "guarded"); err != nil {
			return false, "", err
		}
		return pdb.Status.CurrentHealthy == 2 && pdb.Status.DisruptionsAllowed == 1, fmt.Sprintf("status %+v", pdb.Status), nil
	})
	out := w.must(t, ctx, w.lite(), "drain", node, "--ignore-daemonsets", "--timeout=90s")
	for _, want := range []string{"evicting pod " + wlNS + "/" + victim + "\n", "pod/" + victim + " evicted\n", "node/" + node + " drained\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl-lite drain printed\n%s\nwant %q", out, want)
		}
	}
	w.must(t, ctx, w.lite(), "rollout", "status", "deployment/guarded", "-n", wlNS, "--timeout=120s")
	pods, err = w.podsOf(ctx, "app=guarded")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range live(pods) {
		if p.Spec.NodeName != other {
			t.Errorf("after the drain: %s, want every guarded pod on %s", describe(pods), other)
		}
	}
	// The daemon pod stays on the drained node (--ignore-daemonsets).
	agents, err := w.podsOf(ctx, "app=agent")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(agents, func(p api.Pod) bool { return p.Spec.NodeName == node && p.DeletionTimestamp == nil }) {
		t.Errorf("after the drain: agents %s, want one still on %s", describe(agents), node)
	}

	out = w.must(t, ctx, w.kubectl, "uncordon", node)
	if !strings.Contains(out, "node/"+node+" uncordoned") {
		t.Errorf("kubectl uncordon printed %q", out)
	}
	var n api.Node
	if err := w.c.KubectlJSON(ctx, &n, "get", "node", node); err != nil {
		t.Fatal(err)
	}
	if n.Spec.Unschedulable {
		t.Errorf("node %s is still unschedulable after uncordon", node)
	}
}

// distinctLines are the different lines of s, sorted.
func distinctLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(lines)
	return slices.Compact(lines)
}

// --- CronJob ----------------------------------------------------------------

const cronJobManifest = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
  namespace: ` + wlNS + `
spec:
  schedule: "*/1 * * * *"
  successfulJobsHistoryLimit: 1
  failedJobsHistoryLimit: 1
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - name: tick
            image: minik8s/busybox:latest
            imagePullPolicy: IfNotPresent
            command: ["sh", "-c", "echo tick from $(hostname)"]
`

// cronJob applies a CronJob running every minute and keeping one
// successful Job, waits for two runs a minute apart, and expects only the
// second Job (and its pod) left, with the CronJob's status pointing at it.
func (w *workloads) cronJob(t *testing.T, ctx context.Context) {
	applied := time.Now()
	out := w.apply(t, ctx, w.lite(), cronJobManifest)
	if !strings.Contains(out, "cronjob.batch/tick created") {
		t.Fatalf("kubectl-lite apply printed %q", out)
	}
	var first api.Job
	within(t, ctx, 2*time.Minute, "CronJob tick's first Job complete", func(ctx context.Context) (bool, string, error) {
		jobs, err := w.tickJobs(ctx)
		if err != nil || len(jobs) == 0 {
			return false, fmt.Sprintf("%d jobs", len(jobs)), err
		}
		first = jobs[0]
		return complete(first), fmt.Sprintf("job %s status %+v", first.Name, first.Status), nil
	})
	sched, err := scheduledTime(first)
	if err != nil {
		t.Fatal(err)
	}
	if sched.Second() != 0 || sched.Before(applied.Truncate(time.Minute)) {
		t.Errorf("job %s scheduled for %s, want a whole minute from %s on", first.Name, sched, applied)
	}
	if want := fmt.Sprintf("tick-%d", sched.Unix()/60); first.Name != want {
		t.Errorf("first job is %s, want %s (the scheduled time in minutes)", first.Name, want)
	}
	out = w.must(t, ctx, w.kubectl, "logs", "job/"+first.Name, "-n", wlNS)
	if !strings.HasPrefix(out, "tick from "+first.Name+"-") {
		t.Errorf("kubectl logs job/%s: %q, want tick from its pod", first.Name, out)
	}

	var second api.Job
	within(t, ctx, 2*time.Minute, "the next run complete and the first Job pruned", func(ctx context.Context) (bool, string, error) {
		jobs, err := w.tickJobs(ctx)
		if err != nil {
			return false, "", err
		}
		var names []string
		for _, j := range jobs {
			names = append(names, fmt.Sprintf("%s(complete=%t)", j.Name, complete(j)))
		}
		if len(jobs) != 1 || jobs[0].Name == first.Name || !complete(jobs[0]) {
			return false, fmt.Sprintf("jobs %v", names), nil
		}
		second = jobs[0]
		return true, "", nil
	})
	sched2, err := scheduledTime(second)
	if err != nil {
		t.Fatal(err)
	}
	if d := sched2.Sub(sched); d != time.Minute {
		t.Errorf("jobs %s and %s scheduled %v apart, want a minute", first.Name, second.Name, d)
	}
	// The pruned Job's pod goes with it (background propagation).
	within(t, ctx, time.Minute, "the pruned Job's pods gone", func(ctx context.Context) (bool, string, error) {
		pods, err := w.podsOf(ctx, api.JobNameLabel+"="+first.Name)
		return err == nil && len(pods) == 0, describe(pods), err
	})
	var cj api.CronJob
	if err := w.getJSON(ctx, &cj, "get", "cronjob", "tick"); err != nil {
		t.Fatal(err)
	}
	st := cj.Status
	if st.LastScheduleTime == nil || st.LastSuccessfulTime == nil || len(st.Active) != 0 ||
		second.Status.CompletionTime == nil ||
		st.LastScheduleTime.Before(sched2) || st.LastSuccessfulTime.Before(second.Status.CompletionTime.Add(-time.Second)) {
		t.Errorf("CronJob tick status %+v after job %s (scheduled %s, completed %v)", st, second.Name, sched2, second.Status.CompletionTime)
	}
	// Two clean runs: the controller had nothing to warn about, and said
	// what it did.
	var evs api.List[api.Event]
	if err := w.getJSON(ctx, &evs, "get", "events"); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind != "CronJob" || e.InvolvedObject.Name != "tick" {
			continue
		}
		said = append(said, e.Type+" "+e.Reason+" "+e.Message)
		if e.Type != api.EventTypeNormal {
			t.Errorf("CronJob tick: event %s %s %q", e.Type, e.Reason, e.Message)
		}
	}
	for _, want := range []string{"Normal SuccessfulCreate Created job " + first.Name, "Normal SawCompletedJob Saw completed job: " + first.Name + ", condition: Complete",
		"Normal SuccessfulCreate Created job " + second.Name, "Normal SuccessfulDelete Deleted job " + first.Name} {
		if !slices.Contains(said, want) {
			t.Errorf("CronJob tick's events %q lack %q", said, want)
		}
	}
	// Stop it: a run starting during the namespace's deletion is noise.
	w.must(t, ctx, w.kubectl, "patch", "cronjob", "tick", "-n", wlNS, "-p", `{"spec":{"suspend":true}}`)
}

// tickJobs are CronJob tick's Jobs, oldest first.
func (w *workloads) tickJobs(ctx context.Context) ([]api.Job, error) {
	var l api.List[api.Job]
	if err := w.getJSON(ctx, &l, "get", "jobs"); err != nil {
		return nil, err
	}
	var jobs []api.Job
	for _, j := range l.Items {
		if c := api.GetControllerOf(&j.ObjectMeta); c != nil && c.Kind == "CronJob" && c.Name == "tick" {
			jobs = append(jobs, j)
		}
	}
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Name < jobs[k].Name })
	return jobs, nil
}

func complete(j api.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == "Complete" && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

// scheduledTime reads the batch.kubernetes.io/cronjob-scheduled-timestamp
// annotation the CronJob controller puts on its Jobs.
func scheduledTime(j api.Job) (time.Time, error) {
	v, ok := j.Annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]
	if !ok {
		return time.Time{}, fmt.Errorf("job %s has no cronjob-scheduled-timestamp annotation: %v", j.Name, j.Annotations)
	}
	return time.Parse(time.RFC3339, v)
}

// --- in-cluster client -----------------------------------------------------

const inClusterManifest = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: reader
  namespace: ` + wlNS + `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: ` + wlNS + `
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: reader-reads-pods
  namespace: ` + wlNS + `
subjects:
- kind: ServiceAccount
  name: reader
  namespace: ` + wlNS + `
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: pod-reader
---
apiVersion: v1
kind: Pod
metadata:
  name: incluster
  namespace: ` + wlNS + `
spec:
  serviceAccountName: reader
  restartPolicy: Never
  nodeSelector:
    kubernetes.io/hostname: %s
  containers:
  - name: client
    image: minik8s/e2e-incluster:latest
    imagePullPolicy: Never
    args: ["list:pods", "get:pods::incluster", "list:secrets", "list:pods:kube-system"]
`

// inClusterImage builds internal/e2e/incluster into the image
// minik8s/e2e-incluster and loads that into the base nodes.
func (w *workloads) inClusterImage(t *testing.T, ctx context.Context) {
	t.Helper()
	start := time.Now()
	if err := w.c.TestImage(ctx, "./internal/e2e/incluster", "e2e-incluster", w.base...); err != nil {
		t.Fatal(err)
	}
	t.Logf("in-cluster client image built and loaded in %.1fs", time.Since(start).Seconds())
}

func (w *workloads) inClusterClient(t *testing.T, ctx context.Context) {
	w.inClusterImage(t, ctx)
	out := w.apply(t, ctx, w.kubectl, fmt.Sprintf(inClusterManifest, w.base[len(w.base)-1]))
	if !strings.Contains(out, "serviceaccount/reader created") || !strings.Contains(out, "pod/incluster created") {
		t.Fatalf("kubectl apply printed %q", out)
	}
	var pod api.Pod
	within(t, ctx, 2*time.Minute, "pod incluster terminated", func(ctx context.Context) (bool, string, error) {
		if err := w.getJSON(ctx, &pod, "get", "pod", "incluster"); err != nil {
			return false, "", err
		}
		return pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed, fmt.Sprintf("phase %s", pod.Status.Phase), nil
	})
	logs := w.must(t, ctx, w.lite(), "logs", "incluster", "-n", wlNS)
	t.Logf("in-cluster client's log:\n%s", logs)
	var exit int32 = -1
	if cs := pod.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Terminated != nil {
		exit = cs[0].State.Terminated.ExitCode
	}
	if pod.Status.Phase != api.PodSucceeded || exit != 0 {
		t.Fatalf("pod incluster: phase %s, exit code %d; want Succeeded, 0", pod.Status.Phase, exit)
	}
	// ServiceAccount admission mounted its token.
	if !slices.ContainsFunc(pod.Spec.Volumes, func(v api.Volume) bool {
		return strings.HasPrefix(v.Name, "kube-api-access-") && v.Projected != nil
	}) {
		t.Errorf("pod incluster has volumes %+v, want the projected kube-api-access-* volume", pod.Spec.Volumes)
	}

	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) != 5 {
		t.Fatalf("in-cluster client printed %d lines, want 5", len(lines))
	}
	var who struct {
		User   string   `json:"user"`
		Groups []string `json:"groups"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &who); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + wlNS + ":reader"
	if who.User != user || !slices.Contains(who.Groups, "system:serviceaccounts") || !slices.Contains(who.Groups, "system:serviceaccounts:"+wlNS) {
		t.Errorf("the client is %+v, want %s in system:serviceaccounts and system:serviceaccounts:%s", who, user, wlNS)
	}
	type result struct {
		Request string `json:"request"`
		Allowed bool   `json:"allowed"`
		Items   int    `json:"items"`
		Name    string `json:"name"`
		Code    int32  `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	want := []struct {
		request string
		allowed bool
		message string
	}{
		{"list:pods:" + wlNS + ":", true, ""},
		{"get:pods:" + wlNS + ":incluster", true, ""},
		{"list:secrets:" + wlNS + ":", false, fmt.Sprintf(`secrets is forbidden: User %q cannot list resource "secrets" in API group "" in the namespace %q`, user, wlNS)},
		{"list:pods:kube-system:", false, fmt.Sprintf(`pods is forbidden: User %q cannot list resource "pods" in API group "" in the namespace "kube-system"`, user)},
	}
	for i, wt := range want {
		var r result
		if err := json.Unmarshal([]byte(lines[i+1]), &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Request != wt.request:
			t.Errorf("line %d is about %s, want %s", i+2, r.Request, wt.request)
		case wt.allowed && (!r.Allowed || (strings.HasPrefix(r.Request, "list") && r.Items < 1) || (strings.HasPrefix(r.Request, "get") && r.Name != "incluster")):
			t.Errorf("%s: %+v, want it allowed and answered", r.Request, r)
		case !wt.allowed && (r.Allowed || r.Code != 403 || r.Reason != "Forbidden" || r.Message != wt.message):
			t.Errorf("%s: %+v, want 403 Forbidden %q", r.Request, r, wt.message)
		}
	}
}

// diagnose logs what a failed part needs to be understood.
func (w *workloads) diagnose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"get", "nodes", "-o", "wide"},
		{"get", "pods,statefulsets,daemonsets,deployments,jobs,cronjobs,pdb", "-n", wlNS, "-o", "wide"},
		{"get", "events", "-n", wlNS},
	} {
		out, err := w.c.Kubectl(ctx, args...)
		if err != nil {
			out += err.Error()
		}
		t.Logf("kubectl-lite %s:\n%s", strings.Join(args, " "), out)
	}
	for _, svc := range []string{"controller-manager", "scheduler"} {
		t.Logf("last log lines of %s:\n%s", svc, w.c.Logs(ctx, svc, 30))
	}
}
