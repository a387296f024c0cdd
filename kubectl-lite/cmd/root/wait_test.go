package root_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// TestIntegrationWait waits for a condition another writer sets later, a
// jsonpath value, and a deletion; a condition that never comes times out
// with kubectl's line and exit 1.
func TestIntegrationWait(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	pods := client.Resource[api.Pod](c.client).Namespace("default")
	for _, n := range []string{"a", "b"} {
		if _, err := pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: n, Labels: map[string]string{"app": "w"}},
			Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "c", Image: "busybox"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	s := c.start("wait", "--for=condition=Ready", "pod", "-l", "app=w", "--timeout=60s")
	time.Sleep(time.Second)
	if out := s.output(); len(out) != 0 {
		t.Fatalf("wait returned before the pods were ready: %q", out)
	}
	for _, n := range []string{"a", "b"} {
		p, err := pods.Get(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: "Ready", Status: api.ConditionTrue}}
		if _, err := pods.UpdateStatus(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if code := s.wait(); code != 0 || strings.Join(s.output(), "\n") != "pod/a condition met\npod/b condition met" {
		t.Errorf("wait --for=condition=Ready: exit %d output %q stderr %q", code, s.output(), s.stderr.String())
	}
	if out := c.mustRun("", "wait", "--for=jsonpath={.status.phase}=Running", "pod/a"); out != "pod/a condition met\n" {
		t.Errorf("wait --for=jsonpath = %q", out)
	}
	c.wantFail("error: timed out waiting for the condition on pods/a", "wait", "--for=condition=Ready=False", "pod/a", "--timeout=1s")

	s = c.start("wait", "--for=delete", "pod/b", "--timeout=60s")
	time.Sleep(500 * time.Millisecond)
	c.mustRun("", "delete", "pod", "b", "--grace-period=0", "--force")
	if code := s.wait(); code != 0 || strings.Join(s.output(), "\n") != "pod/b condition met" {
		t.Errorf("wait --for=delete: exit %d output %q stderr %q", code, s.output(), s.stderr.String())
	}
	c.wantFail(`error: unrecognized condition: "ready"`, "wait", "--for=ready", "pod/a")
}
