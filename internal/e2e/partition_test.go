package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// partNS is the namespace of the partition scenario.
const partNS = "e2e-partition"

// TestNodePartition cuts one node off the apiserver (iptables DROP inside
// its container; the node and its pods keep running) and expects
// Kubernetes' sequence: the node goes NotReady (Unknown: its kubelet is
// silent), gets the unreachable NoExecute taint, its pods are evicted when
// their toleration (30 s in the compose apiserver) runs out and replaced
// on the other node. Healed, the node is Ready again, its kubelet finishes
// the evicted pods' deletion and removes their containers: no duplicates.
// The timeline is logged.
func TestNodePartition(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	s := &scenario{c: c, t: t, ctx: ctx}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(cctx, "delete", "namespace", partNS); err != nil {
			t.Logf("delete namespace %s: %v", partNS, err)
		}
	})
	s.nodesReady()
	if _, err := c.RunInput(ctx, []byte(webManifest(partNS, 2)), c.Root+"/bin/kubectl-lite", "--kubeconfig", c.Kubeconfig, "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	s.kubectl("rollout", "status", "deployment/web", "-n", partNS, "--timeout=120s")
	pods := func(ctx context.Context) ([]api.Pod, error) {
		var l api.List[api.Pod]
		if err := c.KubectlJSON(ctx, &l, "get", "pods", "-n", partNS); err != nil {
			return nil, Retry(err)
		}
		return l.Items, nil
	}
	before, err := pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := before[0].Spec.NodeName
	var onVictim []string
	for _, p := range before {
		if p.Spec.NodeName == victim {
			onVictim = append(onVictim, p.Name)
		}
	}
	apiserverIP, err := c.Exec(ctx, victim, "getent", "hosts", "apiserver")
	if err != nil || len(strings.Fields(apiserverIP)) == 0 {
		t.Fatalf("address of the apiserver seen from %s: %q %v", victim, apiserverIP, err)
	}
	ip := strings.Fields(apiserverIP)[0]
	rule := []string{"OUTPUT", "-d", ip, "-j", "DROP", "-m", "comment", "--comment", "e2e partition"}
	healed := false
	heal := func() {
		if !healed {
			if _, err := c.Exec(context.Background(), victim, append([]string{"iptables", "-D"}, rule...)...); err != nil {
				t.Errorf("heal the partition: %v", err)
			}
			healed = true
		}
	}
	defer heal()

	start := time.Now()
	if _, err := c.Exec(ctx, victim, append([]string{"iptables", "-I"}, rule...)...); err != nil {
		t.Fatal(err)
	}
	t.Logf("partitioned %s from the apiserver (%s); its pods: %v", victim, ip, onVictim)
	mark := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }
	node := func(ctx context.Context) (api.Node, error) {
		var n api.Node
		if err := c.KubectlJSON(ctx, &n, "get", "node", victim); err != nil {
			return n, Retry(err)
		}
		return n, nil
	}
	s.within(2*time.Minute, victim+" NotReady", func(ctx context.Context) (bool, string, error) {
		n, err := node(ctx)
		return err == nil && !ready(n), fmt.Sprintf("%+v", n.Status.Conditions), err
	})
	mark(victim + " NotReady")
	s.within(time.Minute, victim+" tainted unreachable:NoExecute", func(ctx context.Context) (bool, string, error) {
		n, err := node(ctx)
		return err == nil && slices.Contains(conditionTaints(n), "node.kubernetes.io/unreachable:NoExecute"), fmt.Sprint(conditionTaints(n)), err
	})
	mark(victim + " tainted node.kubernetes.io/unreachable:NoExecute")
	s.within(2*time.Minute, "pods on "+victim+" evicted", func(ctx context.Context) (bool, string, error) {
		ps, err := pods(ctx)
		if err != nil {
			return false, "", err
		}
		for _, p := range ps {
			if slices.Contains(onVictim, p.Name) && p.DeletionTimestamp == nil {
				return false, describe(ps), nil
			}
		}
		return true, "", nil
	})
	mark("pods on " + victim + " evicted (deletionTimestamp set)")
	s.within(2*time.Minute, "2 replicas Running off "+victim, func(ctx context.Context) (bool, string, error) {
		ps, err := pods(ctx)
		if err != nil {
			return false, "", err
		}
		n := 0
		for _, p := range live(ps) {
			if p.Spec.NodeName != victim && running(p) {
				n++
			}
		}
		return n == 2, describe(ps), nil
	})
	mark("replacements Running on the other node")

	heal()
	healedAt := time.Since(start)
	mark("partition healed")
	s.within(2*time.Minute, victim+" Ready again", func(ctx context.Context) (bool, string, error) {
		n, err := node(ctx)
		return err == nil && ready(n), fmt.Sprintf("%+v", n.Status.Conditions), err
	})
	mark(victim + " Ready again")
	s.within(2*time.Minute, "the evicted pods gone, exactly 2 running", func(ctx context.Context) (bool, string, error) {
		ps, err := pods(ctx)
		if err != nil {
			return false, "", err
		}
		for _, p := range ps {
			if slices.Contains(onVictim, p.Name) || !running(p) || p.DeletionTimestamp != nil {
				return false, describe(ps), nil
			}
		}
		return len(ps) == 2, describe(ps), nil
	})
	mark("evicted pods deleted by their kubelet; 2 pods, no duplicates")
	s.within(time.Minute, "no containers of the evicted pods on "+victim, func(ctx context.Context) (bool, string, error) {
		out, err := c.Exec(ctx, victim, "ctr", "-n", runtimeNamespace(ctx, c, victim), "containers", "ls", "-q", `labels."io.kubernetes.pod.namespace"==`+partNS)
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.TrimSpace(out) == "", "containers: " + strings.Join(strings.Fields(out), " "), nil
	})
	mark("containers of the evicted pods removed")
	t.Logf("partition timeline: healed at %.1fs", healedAt.Seconds())
}
