package root_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// TestIntegrationDrainRetriesDisruptionBudget: a PodDisruptionBudget
// allowing no disruption makes the eviction a 429, which drain reports in
// kubectl's words and retries every 5 s until the budget allows it.
func TestIntegrationDrainRetriesDisruptionBudget(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	if _, err := client.Resource[api.Node](c.client).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1"}}); err != nil {
		t.Fatal(err)
	}
	yes := true
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{"app": "web"},
		OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: &yes}}},
		Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	pods := client.Resource[api.Pod](c.client).Namespace("default")
	created, err := pods.Create(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	// Ready: an unready pod may be evicted while the budget is met.
	created.Status.Phase = api.PodRunning
	created.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}}
	if _, err := pods.UpdateStatus(ctx, created); err != nil {
		t.Fatal(err)
	}
	one := api.FromInt(1)
	pdbs := client.Resource[api.PodDisruptionBudget](c.client).Namespace("default")
	pdb, err := pdbs.Create(ctx, &api.PodDisruptionBudget{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
	if err != nil {
		t.Fatal(err)
	}
	// What the disruption controller would write: one healthy pod, one
	// needed, no disruption allowed.
	pdb.Status = api.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	if pdb, err = pdbs.UpdateStatus(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	// With the budget spent, a short --timeout ends the retries with
	// kubectl's words, the pod still there.
	out, errOut, code := c.run("", "drain", "n1", "--grace-period=0", "--timeout=2s")
	timeout := `error when evicting pods/"web-1" -n "default": global timeout reached: 2s`
	wantErr := `error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.
There are pending pods in node "n1" when an error occurred: ` + timeout + `
pod/web-1
error: unable to drain node "n1" due to error: ` + timeout + `, continuing command...
There are pending nodes to be drained:
 n1
` + timeout + "\n"
	if code != 1 || out != "node/n1 cordoned\nevicting pod default/web-1\nevicting pod default/web-1\n" || errOut != wantErr {
		t.Fatalf("drain --timeout=2s: exit %d stdout %q stderr\n%s\nwant stderr\n%s", code, out, errOut, wantErr)
	}
	if _, err := pods.Get(ctx, "web-1"); err != nil {
		t.Fatalf("pod after the refused drain: %v", err)
	}
	// A replacement shows up 3 s later (drain retries after 5 s): the budget allows one.
	go func() {
		time.Sleep(3 * time.Second)
		pdb.Status.CurrentHealthy, pdb.Status.ExpectedPods, pdb.Status.DisruptionsAllowed = 2, 2, 1
		if _, err := pdbs.UpdateStatus(ctx, pdb); err != nil {
			t.Error(err)
		}
	}()
	out, errOut, code = c.run("", "drain", "n1", "--grace-period=0", "--timeout=30s")
	if code != 0 || !strings.Contains(out, "evicting pod default/web-1\n") || !strings.Contains(out, "pod/web-1 evicted\n") ||
		!strings.Contains(errOut, `error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`) {
		t.Fatalf("drain: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if _, err := pods.Get(ctx, "web-1"); !apierrors.IsNotFound(err) {
		t.Fatalf("pod after drain: %v", err)
	}
	got, err := pdbs.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Status.DisruptedPods["web-1"]; !ok || got.Status.DisruptionsAllowed != 0 {
		t.Fatalf("budget after the eviction: %+v", got.Status)
	}
}
