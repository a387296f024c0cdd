package root_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

func TestIntegrationCordonDrain(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	for _, n := range []string{"n1", "n2"} {
		if _, err := client.Resource[api.Node](c.client).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	owner := func(kind string) []api.OwnerReference {
		return []api.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "x", UID: "uid-" + api.UID(kind), Controller: &yes}}
	}
	pods := client.Resource[api.Pod](c.client)
	for _, p := range []api.Pod{
		{ObjectMeta: api.ObjectMeta{Name: "rs-pod", Namespace: "default", OwnerReferences: owner("ReplicaSet")}, Spec: api.PodSpec{NodeName: "n1"}},
		{ObjectMeta: api.ObjectMeta{Name: "ds-pod", Namespace: "kube-system", OwnerReferences: owner("DaemonSet")}, Spec: api.PodSpec{NodeName: "n1"}},
		{ObjectMeta: api.ObjectMeta{Name: "bare", Namespace: "default"}, Spec: api.PodSpec{NodeName: "n1"}},
		{ObjectMeta: api.ObjectMeta{Name: "static-n1", Namespace: "kube-system", Annotations: map[string]string{"kubernetes.io/config.mirror": "abc"}}, Spec: api.PodSpec{NodeName: "n1"}},
		{ObjectMeta: api.ObjectMeta{Name: "elsewhere", Namespace: "default", OwnerReferences: owner("ReplicaSet")}, Spec: api.PodSpec{NodeName: "n2"}},
	} {
		p.Spec.Containers = []api.Container{{Name: "c", Image: "busybox"}}
		if _, err := pods.Namespace(p.Namespace).Create(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}
	if out := c.mustRun("", "cordon", "n2"); out != "node/n2 cordoned\n" {
		t.Errorf("cordon = %q", out)
	}
	if out := c.mustRun("", "cordon", "node/n2"); out != "node/n2 already cordoned\n" {
		t.Errorf("second cordon = %q", out)
	}
	if out := c.mustRun("", "get", "nodes", "n2"); !strings.Contains(out, "Unknown,SchedulingDisabled") {
		t.Errorf("get cordoned node = %q", out)
	}
	if out := c.mustRun("", "uncordon", "n2"); out != "node/n2 uncordoned\n" {
		t.Errorf("uncordon = %q", out)
	}

	// Without flags drain cordons, then refuses: a DaemonSet pod and an
	// unmanaged pod are on the node. Nothing is deleted.
	out, errOut, code := c.run("", "drain", "n1")
	if code != 1 || out != "node/n1 cordoned\n" ||
		// kubectl's aggregate of the filters' refusals, then each refusal
		// bare on the last lines.
		errOut != `error: unable to drain node "n1" due to error: [cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/ds-pod, cannot delete Pods that declare no controller (use --force to override): default/bare], continuing command...
There are pending nodes to be drained:
 n1
cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/ds-pod
cannot delete Pods that declare no controller (use --force to override): default/bare
` {
		t.Errorf("drain without flags: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if got := podNames(t, c); got != "default/bare default/elsewhere default/rs-pod kube-system/ds-pod kube-system/static-n1" {
		t.Errorf("a refused drain deleted pods: %s", got)
	}

	// Dry runs say what would go and change nothing.
	if out := c.mustRun("", "cordon", "n2", "--dry-run"); out != "node/n2 cordoned (dry run)\n" {
		t.Errorf("cordon --dry-run = %q", out)
	}
	if out := c.mustRun("", "cordon", "n2", "--dry-run=server"); out != "node/n2 cordoned (server dry run)\n" {
		t.Errorf("cordon --dry-run=server = %q", out)
	}
	if n, err := client.Resource[api.Node](c.client).Get(ctx, "n2"); err != nil || n.Spec.Unschedulable {
		t.Errorf("a dry-run cordon cordoned: %v %v", n, err)
	}
	c.mustRun("", "uncordon", "n1")
	for _, mode := range []string{"client", "server"} {
		suffix := map[string]string{"client": " (dry run)", "server": " (server dry run)"}[mode]
		out, _, code := c.run("", "drain", "n1", "--ignore-daemonsets", "--force", "--dry-run="+mode)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		// A client dry run says what it would evict; a server one also
		// what the server evicted (dryRun=All).
		want := map[string]int{"client": 4, "server": 6}[mode]
		if code != 0 || len(lines) != want || lines[0] != "node/n1 cordoned"+suffix || lines[want-1] != "node/n1 drained"+suffix ||
			!strings.Contains(out, "evicting pod default/bare"+suffix+"\n") || mode == "server" && !strings.Contains(out, "pod/bare evicted"+suffix+"\n") {
			t.Errorf("drain --dry-run=%s: exit %d stdout %q", mode, code, out)
		}
		if got := podNames(t, c); got != "default/bare default/elsewhere default/rs-pod kube-system/ds-pod kube-system/static-n1" {
			t.Errorf("drain --dry-run=%s deleted pods: %s", mode, got)
		}
		if n, err := client.Resource[api.Node](c.client).Get(ctx, "n1"); err != nil || n.Spec.Unschedulable {
			t.Errorf("drain --dry-run=%s cordoned: %v %v", mode, n, err)
		}
	}
	c.mustRun("", "cordon", "n1")

	out, errOut, code = c.run("", "drain", "n1", "--ignore-daemonsets", "--force", "--grace-period=0", "--timeout=60s")
	if code != 0 {
		t.Fatalf("drain: exit %d stdout %q stderr %q", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines[1 : len(lines)-1])
	// The server has pods/eviction, so drain evicts, as kubectl does.
	if got := strings.Join(lines, "\n"); got != "node/n1 already cordoned\nevicting pod default/bare\nevicting pod default/rs-pod\npod/bare evicted\npod/rs-pod evicted\nnode/n1 drained" {
		t.Errorf("drain stdout =\n%s", got)
	}
	for _, w := range []string{"Warning: ignoring DaemonSet-managed Pods: kube-system/ds-pod\n", "Warning: deleting Pods that declare no controller: default/bare\n"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("drain stderr %q lacks %q", errOut, w)
		}
	}
	if got := podNames(t, c); got != "default/elsewhere kube-system/ds-pod kube-system/static-n1" {
		t.Errorf("after drain the pods are %s", got)
	}
	n, err := client.Resource[api.Node](c.client).Get(ctx, "n1")
	if err != nil || !n.Spec.Unschedulable {
		t.Errorf("drained node not cordoned: %v %v", n, err)
	}

	// --disable-eviction deletes, as kubectl does without the eviction API.
	out, errOut, code = c.run("", "drain", "n2", "--disable-eviction", "--grace-period=0", "--timeout=60s")
	if code != 0 || out != "node/n2 cordoned\npod/elsewhere deleted\nnode/n2 drained\n" {
		t.Errorf("drain --disable-eviction: exit %d stdout %q stderr %q", code, out, errOut)
	}
}

func podNames(t *testing.T, c *cluster) string {
	t.Helper()
	l, err := client.Resource[api.Pod](c.client).Namespace("").List(context.Background(), client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range l.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}
