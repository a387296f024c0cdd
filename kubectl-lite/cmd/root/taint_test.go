package root_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// TestIntegrationTaintAsKubectl runs the same taint commands with
// kubectl-lite on node lite and the real kubectl on node real of one
// apiserver: the same output, errors and exit codes, and the same taints
// left on each node after every step.
func TestIntegrationTaintAsKubectl(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	nodes := client.Resource[api.Node](c.client)
	for _, n := range []string{"lite", "real"} {
		if _, err := nodes.Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: n, Labels: map[string]string{"tool": n}}}); err != nil {
			t.Fatal(err)
		}
	}
	taints := func(name string) []api.Taint {
		n, err := nodes.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return n.Spec.Taints
	}
	for _, args := range [][]string{
		{"nodes", "NODE", "dedicated=special-user:NoSchedule"},
		{"nodes", "NODE", "dedicated=again:NoSchedule"},
		{"node", "NODE", "dedicated=other:NoSchedule", "--overwrite"},
		{"no", "NODE", "bar:NoExecute", "baz=1:PreferNoSchedule"},
		{"nodes", "NODE", "dedicated:NoSchedule-"},
		{"nodes", "NODE", "dedicated-"},
		{"nodes", "NODE", "bar-", "qux=2:NoSchedule"},
		{"nodes", "NODE", "baz:PreferNoSchedule-", "--dry-run=client"},
		{"nodes", "NODE", "baz:PreferNoSchedule-", "--dry-run=server"},
		{"nodes", "-l", "tool=NODE", "sel=1:NoSchedule"},
		{"nodes", "NODE", "a=b=c:NoSchedule"},
		{"nodes", "NODE", "x=y:Sometimes"},
		{"nodes", "NODE", "x=y:NoSchedule", "x=z:NoSchedule"},
		{"nodes", "NODE", "x=y:NoSchedule", "x-"},
		{"pods", "NODE", "x=y:NoSchedule"},
		{"nodes", "NODE"},
		{"nodes", "x=y:NoSchedule"},
		{"nodes", "NODE", "x=y:NoSchedule", "stray"},
		{"nodes", "missing", "x=y:NoSchedule"},
		{"nodes", "--all", "-l", "tool=NODE", "x=y:NoSchedule"},
		{"nodes", "NODE", "baz-", "qux-", "sel-"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			with := func(node string) []string {
				out := make([]string, len(args))
				for i, a := range args {
					out[i] = strings.ReplaceAll(a, "NODE", node)
				}
				return append([]string{"taint"}, out...)
			}
			out, errOut, code := c.run("", with("lite")...)
			kOut, kErrOut, kCode := c.kubectl(with("real")...)
			norm := func(s, node string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "kubectl-lite", "kubectl"), node, "NODE")
			}
			if norm(out, "lite") != norm(kOut, "real") || norm(errOut, "lite") != norm(kErrOut, "real") || code != kCode {
				t.Errorf("kubectl-lite: exit %d\n%s%s\nkubectl: exit %d\n%s%s", code, out, errOut, kCode, kOut, kErrOut)
			}
			if lite, real := taints("lite"), taints("real"); !reflect.DeepEqual(lite, real) {
				t.Errorf("taints of lite %+v, of real %+v", lite, real)
			}
		})
	}
	if got := taints("lite"); len(got) != 0 {
		t.Errorf("taints left: %+v", got)
	}
}
