package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// The highly-available cluster of docker-compose.ha.yaml (make up HA=1):
// its project, the load balancer's host port and each member's.
const (
	haProject = "minik8s-ha"
	haLBPort  = 7443
	haNS      = "ha-e2e"
)

func haMemberPort(n int) int { return 7450 + n }

// haCluster drives the HA compose cluster from the host.
type haCluster struct {
	*Cluster
	t *testing.T
}

// requireHA skips unless MINIK8S_E2E_HA=1 (make e2e-ha) and fails when the
// HA cluster is not up.
func requireHA(t *testing.T) *haCluster {
	t.Helper()
	if os.Getenv("MINIK8S_E2E_HA") != "1" {
		t.Skip("HA fault tests not requested: make e2e-ha (or MINIK8S_E2E_HA=1 with make up HA=1)")
	}
	c, err := NewCluster(".")
	if err != nil {
		t.Fatal(err)
	}
	c.Project = haProject
	c.Compose = append(c.Compose, "-f", "docker-compose.ha.yaml")
	c.Kubeconfig = filepath.Join(c.Root, ".minik8s-ha", "kubeconfig")
	c.Logf = t.Logf
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		t.Fatalf("the HA cluster is not up (%v): make up HA=1", err)
	}
	h := &haCluster{Cluster: c, t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h.waitMembers(ctx, 1, 2, 3)
	return h
}

// container is the ID of service's container (running or not).
func (h *haCluster) container(ctx context.Context, service string) string {
	h.t.Helper()
	out, err := h.Run(ctx, "docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+haProject, "--filter", "label=com.docker.compose.service="+service)
	if err != nil || strings.TrimSpace(out) == "" {
		h.t.Fatalf("no container of %s: %v", service, err)
	}
	return strings.Fields(out)[0]
}

// memberExec runs args in apiserver-n's container.
func (h *haCluster) memberExec(ctx context.Context, n int, args ...string) (string, error) {
	return h.Run(ctx, "docker", append([]string{"exec", h.container(ctx, fmt.Sprintf("apiserver-%d", n))}, args...)...)
}

// localKubectl runs kubectl-lite inside apiserver-n against that apiserver
// alone (loopback), with a bounded request time.
func (h *haCluster) localKubectl(ctx context.Context, n int, args ...string) (string, error) {
	return h.memberExec(ctx, n, append([]string{"kubectl-lite", "--kubeconfig", "/var/lib/minik8s/pki/admin.kubeconfig",
		"--server", "https://127.0.0.1:6443", "--request-timeout", "10s"}, args...)...)
}

type haMember struct {
	id, name string
	started  bool
	leader   bool
}

// members is the etcd member list as apiserver-n's etcd sees it.
func (h *haCluster) members(ctx context.Context, n int) ([]haMember, error) {
	out, err := h.memberExec(ctx, n, "apiserver", "etcd", "member", "list", "--cert-dir", "/var/lib/minik8s/pki", "--timeout", "10s")
	if err != nil {
		return nil, err
	}
	var ms []haMember
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		if f[1] == "unstarted" { // no name yet: the columns shift
			ms = append(ms, haMember{id: f[0], started: false})
			continue
		}
		ms = append(ms, haMember{id: f[0], name: f[1], started: f[2] == "started", leader: f[3] == "true"})
	}
	return ms, nil
}

// waitMembers waits until every apiserver-n of ns is healthy and the etcd
// cluster lists them all started.
func (h *haCluster) waitMembers(ctx context.Context, ns ...int) {
	h.t.Helper()
	within(h.t, ctx, 3*time.Minute, "every control-plane member healthy and started in etcd", func(ctx context.Context) (bool, string, error) {
		for _, n := range ns {
			out, err := h.Run(ctx, "docker", "inspect", "-f", "{{.State.Health.Status}}", h.container(ctx, fmt.Sprintf("apiserver-%d", n)))
			if err != nil || strings.TrimSpace(out) != "healthy" {
				return false, fmt.Sprintf("apiserver-%d: %s %v", n, strings.TrimSpace(out), err), nil
			}
		}
		ms, err := h.members(ctx, ns[0])
		if err != nil {
			return false, err.Error(), nil
		}
		started := 0
		for _, m := range ms {
			if m.started {
				started++
			}
		}
		if started < len(ns) {
			return false, fmt.Sprintf("%d of %d members started: %+v", started, len(ns), ms), nil
		}
		return true, "", nil
	})
}

// leader is the number of the member whose etcd is the raft leader.
func (h *haCluster) leader(ctx context.Context, ask int) int {
	h.t.Helper()
	ms, err := h.members(ctx, ask)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, m := range ms {
		if m.leader {
			n, _ := strconv.Atoi(strings.TrimPrefix(m.name, "apiserver-"))
			return n
		}
	}
	h.t.Fatalf("no etcd leader among %+v", ms)
	return 0
}

// client is an admin client of the host port (the load balancer's or a
// member's), requests bounded by timeout.
func (h *haCluster) client(port int, timeout time.Duration) *client.Client {
	h.t.Helper()
	kc, err := kubeconfig.Load(h.Kubeconfig)
	if err != nil {
		h.t.Fatal(err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		h.t.Fatal(err)
	}
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.Timeout = timeout
	cfg.MaxRetries = -1
	c, err := client.New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// holder is a Lease's holder identity ("" when unreadable).
func holder(ctx context.Context, c *client.Client, name string) string {
	l, err := client.Resource[api.Lease](c).Namespace("kube-system").Get(ctx, name)
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// memberOf is the member number of a component's holder identity
// ("scheduler-2_<uuid>": 2), 0 when none.
func memberOf(identity string) int {
	i := strings.IndexByte(identity, '_')
	if i < 0 {
		return 0
	}
	j := strings.LastIndexByte(identity[:i], '-')
	n, _ := strconv.Atoi(identity[j+1 : i])
	return n
}

func (h *haCluster) ensureNamespace(ctx context.Context) {
	h.t.Helper()
	_, err := client.Resource[api.Namespace](h.client(haLBPort, 10*time.Second)).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: haNS}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatal(err)
	}
}

// seed creates haNS and in it the config map name (if missing) through the
// load balancer, whose client it returns.
func (h *haCluster) seed(ctx context.Context, name string) *client.Client {
	h.t.Helper()
	h.ensureNamespace(ctx)
	lb := h.client(haLBPort, 10*time.Second)
	if _, err := configMaps(lb).Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatal(err)
	}
	return lb
}

func configMaps(c *client.Client) *client.ResourceClient[api.ConfigMap, *api.ConfigMap] {
	return client.Resource[api.ConfigMap](c).Namespace(haNS)
}

// TestHAKillLeader SIGKILLs the control-plane member whose etcd is the
// raft leader and whose scheduler holds the kube-scheduler Lease (the
// leadership is moved there first when they differ), under continuous
// creates through the load balancer and a watch through that member:
// every create answered 201 is readable afterwards and was watched (the
// watch resumes on another member from the last resourceVersion seen),
// the scheduler's and controller-manager's Leases move to a live member
// (the figures are logged) and kubectl-lite through the load balancer
// keeps working. The member is started again at the end and catches up.
func TestHAKillLeader(t *testing.T) {
	h := requireHA(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	h.ensureNamespace(ctx)
	lb := h.client(haLBPort, 5*time.Second)

	// The victim: the scheduler Lease's holder, made the etcd leader too.
	var victim int
	within(t, ctx, 2*time.Minute, "a scheduler Lease holder", func(ctx context.Context) (bool, string, error) {
		victim = memberOf(holder(ctx, lb, "kube-scheduler"))
		return victim > 0, "", nil
	})
	if l := h.leader(ctx, victim); l != victim {
		out, err := h.memberExec(ctx, victim, "apiserver", "etcd", "member", "move-leader", fmt.Sprintf("apiserver-%d", victim), "--cert-dir", "/var/lib/minik8s/pki")
		if err != nil {
			t.Fatalf("move the etcd leadership from apiserver-%d to apiserver-%d: %v", l, victim, err)
		}
		t.Logf("%s", strings.TrimSpace(out))
	}
	if l := h.leader(ctx, victim); l != victim {
		t.Fatalf("etcd leader is apiserver-%d, want apiserver-%d", l, victim)
	}
	cmHolder := holder(ctx, lb, "kube-controller-manager")
	t.Logf("victim: member %d (etcd leader, scheduler Lease holder); controller-manager Lease holder %q", victim, cmHolder)
	others := []int{victim%3 + 1, (victim+1)%3 + 1}

	first, err := configMaps(lb).Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{GenerateName: "start-"}})
	if err != nil {
		t.Fatal(err)
	}

	// The watch: through the victim's own apiserver, resumed through the
	// others when it ends or goes silent while writes are acknowledged.
	type watched struct {
		rv   int64
		name string
	}
	var (
		mu       sync.Mutex
		seen     = map[string]int64{} // name -> rv
		order    []watched
		resumes  []string
		acked    = map[string]int64{}
		lastAck  time.Time
		errCount int
		maxGap   time.Duration
	)
	watchDone := make(chan struct{})
	stopWatch := make(chan struct{})
	go func() {
		defer close(watchDone)
		rv := first.ResourceVersion
		port := haMemberPort(victim)
		for attempt := 0; ; attempt++ {
			select {
			case <-stopWatch:
				return
			default:
			}
			wctx, wcancel := context.WithCancel(ctx)
			w, err := configMaps(h.client(port, 0)).Watch(wctx, client.ListOptions{ResourceVersion: rv})
			if err != nil {
				wcancel()
				port = haMemberPort(others[attempt%2])
				time.Sleep(200 * time.Millisecond)
				continue
			}
			lastEvent := time.Now()
			tick := time.NewTicker(500 * time.Millisecond)
		loop:
			for {
				select {
				case <-stopWatch:
					tick.Stop()
					w.Stop()
					wcancel()
					return
				case ev, ok := <-w.ResultChan():
					if !ok || ev.Object == nil {
						break loop
					}
					lastEvent = time.Now()
					n, _ := strconv.ParseInt(ev.Object.ResourceVersion, 10, 64)
					mu.Lock()
					if ev.Type == "ADDED" {
						seen[ev.Object.Name] = n
						order = append(order, watched{n, ev.Object.Name})
					}
					mu.Unlock()
					rv = ev.Object.ResourceVersion
				case <-tick.C:
					mu.Lock()
					stale := time.Since(lastEvent) > 4*time.Second && lastAck.After(lastEvent)
					mu.Unlock()
					if stale {
						break loop
					}
				}
			}
			tick.Stop()
			w.Stop()
			wcancel()
			next := haMemberPort(others[attempt%2])
			mu.Lock()
			resumes = append(resumes, fmt.Sprintf("%s: from port %d to %d after resourceVersion %s", time.Now().Format("15:04:05.0"), port, next, rv))
			mu.Unlock()
			port = next
		}
	}()

	// The writer: creates through the load balancer, a fresh connection
	// after any error (the one it had may lead to the killed member).
	run := time.Now().Unix() // names of this run's creates
	stopWrites := make(chan struct{})
	writesDone := make(chan struct{})
	go func() {
		defer close(writesDone)
		c := configMaps(h.client(haLBPort, 5*time.Second))
		prev := time.Now()
		for i := 0; ; i++ {
			select {
			case <-stopWrites:
				return
			default:
			}
			cm, err := c.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("w-%d-%05d", run, i)}, Data: map[string]string{"i": strconv.Itoa(i)}})
			mu.Lock()
			if err == nil {
				rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
				acked[cm.Name] = rv
				now := time.Now()
				if gap := now.Sub(prev); gap > maxGap {
					maxGap = gap
				}
				prev, lastAck = now, now
			} else {
				errCount++
			}
			mu.Unlock()
			if err != nil {
				c = configMaps(h.client(haLBPort, 5*time.Second))
				time.Sleep(100 * time.Millisecond)
			} else {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()

	time.Sleep(4 * time.Second)
	killed := time.Now()
	victims := []string{fmt.Sprintf("apiserver-%d", victim), fmt.Sprintf("scheduler-%d", victim), fmt.Sprintf("controller-manager-%d", victim)}
	var ids []string
	for _, s := range victims {
		ids = append(ids, h.container(ctx, s))
	}
	if _, err := h.Run(ctx, "docker", append([]string{"kill", "--signal", "KILL"}, ids...)...); err != nil {
		t.Fatal(err)
	}
	t.Logf("docker kill %v", victims)

	// Leadership moves to a live member.
	live := h.client(haMemberPort(others[0]), 3*time.Second)
	moved := func(lease string) (time.Duration, string) {
		var who string
		err := Poll(ctx, 250*time.Millisecond, lease+" Lease held by a live member", func(ctx context.Context) (bool, string, error) {
			who = holder(ctx, live, lease)
			m := memberOf(who)
			return m != 0 && m != victim, who, nil
		})
		if err != nil {
			t.Errorf("%v", err)
		}
		return time.Since(killed), who
	}
	schedMoved, schedHolder := moved("kube-scheduler")
	t.Logf("kube-scheduler Lease: %s -> %s %.1f s after the kill (lease duration 15 s, retry period 2 s)", victims[1], schedHolder, schedMoved.Seconds())
	cmMoved, cmNew := moved("kube-controller-manager")
	if memberOf(cmHolder) == victim {
		t.Logf("kube-controller-manager Lease: %s -> %s %.1f s after the kill", cmHolder, cmNew, cmMoved.Seconds())
	} else {
		t.Logf("kube-controller-manager Lease stayed with %s (not on the killed member)", cmNew)
	}
	if schedMoved > 45*time.Second {
		t.Errorf("the scheduler Lease took %.1f s to move", schedMoved.Seconds())
	}

	// kubectl-lite through the load balancer.
	kstart := time.Now()
	if out, err := h.Kubectl(ctx, "get", "configmaps", "-n", haNS, "--request-timeout", "10s"); err != nil {
		t.Errorf("kubectl-lite through the load balancer after the kill: %v", err)
	} else {
		t.Logf("kubectl-lite get configmaps through the load balancer: %d lines in %.2f s", strings.Count(out, "\n"), time.Since(kstart).Seconds())
	}

	time.Sleep(5 * time.Second)
	close(stopWrites)
	<-writesDone

	// Every acknowledged create was watched and is readable.
	if err := Poll(ctx, 500*time.Millisecond, "the watch to see every acknowledged create", func(ctx context.Context) (bool, string, error) {
		mu.Lock()
		defer mu.Unlock()
		missing := 0
		for name := range acked {
			if _, ok := seen[name]; !ok {
				missing++
			}
		}
		return missing == 0 && len(acked) > 0, fmt.Sprintf("%d of %d not watched yet", missing, len(acked)), nil
	}); err != nil {
		t.Error(err)
	}
	close(stopWatch)
	<-watchDone
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(order); i++ {
		if order[i].rv <= order[i-1].rv {
			t.Errorf("watch went back: %s at %d after %s at %d", order[i].name, order[i].rv, order[i-1].name, order[i-1].rv)
		}
	}
	for name, rv := range acked {
		if got := seen[name]; got != 0 && got != rv {
			t.Errorf("%s: created at resourceVersion %d, watched at %d", name, rv, got)
		}
	}
	list, err := configMaps(h.client(haLBPort, 30*time.Second)).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = true
	}
	lost := 0
	for name := range acked {
		if !have[name] {
			lost++
			t.Errorf("acknowledged create %s is gone", name)
		}
	}
	t.Logf("writes: %d acknowledged, %d failed or timed out, longest gap between acknowledgements %.1f s; lost: %d; watch resumes: %v", len(acked), errCount, maxGap.Seconds(), lost, resumes)
	if len(acked) < 50 {
		t.Errorf("only %d creates acknowledged", len(acked))
	}
	if len(resumes) == 0 {
		t.Errorf("the watch through the killed member was never resumed elsewhere")
	}

	// The member comes back with its data and catches up.
	if _, err := h.Run(ctx, "docker", append([]string{"start"}, ids...)...); err != nil {
		t.Fatal(err)
	}
	h.waitMembers(ctx, 1, 2, 3)
	names := make([]string, 0, len(acked))
	for n := range acked {
		names = append(names, n)
	}
	sort.Strings(names)
	if out, err := h.localKubectl(ctx, victim, "get", "configmap", "-n", haNS, names[len(names)-1]); err != nil {
		t.Errorf("the restarted member does not serve the last write: %v", err)
	} else {
		t.Logf("restarted apiserver-%d serves %s", victim, strings.Fields(strings.Split(out, "\n")[1])[0])
	}
}

// TestHAPartition disconnects a follower member's apiserver from the
// compose network: it serves no write and no quorum read (no split brain)
// while the majority keeps accepting writes, and it catches up once
// reconnected.
func TestHAPartition(t *testing.T) {
	h := requireHA(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	lb := h.seed(ctx, "before-partition")
	l := h.leader(ctx, 1)
	p := l%3 + 1
	network := haProject + "_default"
	id := h.container(ctx, fmt.Sprintf("apiserver-%d", p))
	if _, err := h.Run(ctx, "docker", "network", "disconnect", network, id); err != nil {
		t.Fatal(err)
	}
	reconnected := false
	reconnect := func() {
		if !reconnected {
			reconnected = true
			if _, err := h.Run(context.Background(), "docker", "network", "connect", "--alias", "apiserver", "--alias", fmt.Sprintf("apiserver-%d", p), network, id); err != nil {
				t.Errorf("reconnect apiserver-%d: %v", p, err)
			}
		}
	}
	defer reconnect()
	t.Logf("apiserver-%d disconnected from %s (etcd leader: apiserver-%d)", p, network, l)

	// The minority side: writes and quorum reads fail.
	time.Sleep(3 * time.Second)
	start := time.Now()
	if out, err := h.localKubectl(ctx, p, "create", "configmap", "minority-write", "-n", haNS); err == nil {
		t.Errorf("a write through the partitioned apiserver-%d succeeded: %s", p, out)
	} else {
		t.Logf("write through the partitioned member refused after %.1f s: %s", time.Since(start).Seconds(), lastLine(err))
	}
	start = time.Now()
	if out, err := h.localKubectl(ctx, p, "get", "configmap", "before-partition", "-n", haNS); err == nil {
		t.Errorf("a quorum read through the partitioned apiserver-%d succeeded: %s", p, out)
	} else {
		t.Logf("quorum read through the partitioned member refused after %.1f s: %s", time.Since(start).Seconds(), lastLine(err))
	}
	// The majority side: writes through the load balancer go on.
	for i := range 5 {
		if _, err := configMaps(lb).Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("majority-%d", i)}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("write through the majority: %v", err)
		}
	}

	reconnect()
	within(t, ctx, 3*time.Minute, fmt.Sprintf("apiserver-%d, reconnected, serves the majority's writes", p), func(ctx context.Context) (bool, string, error) {
		out, err := h.localKubectl(ctx, p, "get", "configmap", "majority-4", "-n", haNS)
		if err != nil {
			return false, lastLine(err), nil
		}
		return true, out, nil
	})
	if out, err := h.localKubectl(ctx, p, "get", "configmap", "minority-write", "-n", haNS); err == nil {
		t.Errorf("the write refused during the partition exists: %s", out)
	}
	h.waitMembers(ctx, 1, 2, 3)
}

// TestHAMemberReadd removes a follower member from etcd, wipes its data
// and certificate volumes and starts it again (scripts/ha-member.sh
// readd): it adds itself back (a new member ID), copies the CAs from the
// shared directory and serves the cluster's data.
func TestHAMemberReadd(t *testing.T) {
	h := requireHA(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	h.seed(ctx, "before-readd")
	l := h.leader(ctx, 1)
	r := (l+1)%3 + 1
	other := l
	before, err := h.members(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := h.Run(ctx, filepath.Join(h.Root, "scripts", "ha-member.sh"), "readd", strconv.Itoa(r))
	if err != nil {
		t.Fatalf("ha-member.sh readd %d: %v", r, err)
	}
	t.Logf("ha-member.sh readd %d took %.1f s:\n%s", r, time.Since(start).Seconds(), out)
	h.waitMembers(ctx, 1, 2, 3)
	after, err := h.members(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	oldID, newID := "", ""
	for _, m := range before {
		if m.name == fmt.Sprintf("apiserver-%d", r) {
			oldID = m.id
		}
	}
	for _, m := range after {
		if m.name == fmt.Sprintf("apiserver-%d", r) {
			newID = m.id
		}
	}
	if len(after) != 3 || newID == "" || newID == oldID {
		t.Fatalf("members after the re-add: %+v (apiserver-%d was %s)", after, r, oldID)
	}
	if out, err := h.localKubectl(ctx, r, "get", "configmap", "before-readd", "-n", haNS); err != nil {
		t.Fatalf("the re-added member does not serve the data: %v", err)
	} else {
		t.Logf("re-added apiserver-%d (etcd member %s, was %s) serves: %s", r, newID, oldID, strings.TrimSpace(out))
	}
	caR, err := h.memberExec(ctx, r, "busybox", "cat", "/var/lib/minik8s/pki/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	caO, err := h.memberExec(ctx, other, "busybox", "cat", "/var/lib/minik8s/pki/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	if caR != caO {
		t.Errorf("the re-added member's cluster CA differs from apiserver-%d's", other)
	}
}

// lastLine is the last non-empty line of a command error.
func lastLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	return lines[len(lines)-1]
}
