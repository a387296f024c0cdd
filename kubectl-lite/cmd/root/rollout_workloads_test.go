package root_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

const sts2 = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 2
  serviceName: nginx
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:3
`

// TestIntegrationRolloutStatefulSet: status, history, undo, restart and
// scale of a StatefulSet, whose ControllerRevisions the test writes as the
// controller would (no controller runs here).
func TestIntegrationRolloutStatefulSet(t *testing.T) {
	c := startCluster(t)
	c.mustRun(sts2, "apply", "-f", "-")
	ctx := context.Background()
	sets := client.Resource[api.StatefulSet](c.client).Namespace("default")
	s, err := sets.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	for rev, cause := range map[int64]string{1: "first", 2: "", 3: ""} {
		tmpl := s.Spec.Template
		// The defaulted container, as the controller stores it.
		ctr := *api.DeepCopy(&s.Spec.Template.Spec.Containers[0])
		ctr.Image = "nginx:" + string(rune('0'+rev))
		tmpl.Spec.Containers = []api.Container{ctr}
		if rev == 3 {
			tmpl = s.Spec.Template // the live template, as stored
		}
		data, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
		ann := map[string]string{}
		if cause != "" {
			ann["kubernetes.io/change-cause"] = cause
		}
		if _, err := client.Resource[api.ControllerRevision](c.client).Namespace("default").Create(ctx, &api.ControllerRevision{
			ObjectMeta: api.ObjectMeta{Name: "web-r" + string(rune('0'+rev)), Annotations: ann, Labels: map[string]string{"app": "nginx"},
				OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: s.UID, Controller: &yes}}},
			Data: data, Revision: rev}); err != nil {
			t.Fatal(err)
		}
	}
	want := "statefulset.apps/web\nREVISION  CHANGE-CAUSE\n1         first\n2         <none>\n3         <none>\n\n"
	if out := c.mustRun("", "rollout", "history", "sts/web"); out != want {
		t.Errorf("history =\n%q\nwant\n%q", out, want)
	}
	if out := c.mustRun("", "rollout", "history", "statefulset/web", "--revision=2"); !strings.Contains(out, "statefulset.apps/web with revision #2\n") || !strings.Contains(out, "nginx:2") {
		t.Errorf("history --revision=2:\n%s", out)
	}
	image := func() string {
		t.Helper()
		s, err := sets.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		return s.Spec.Template.Spec.Containers[0].Image
	}
	if out := c.mustRun("", "rollout", "undo", "sts/web"); out != "statefulset.apps/web rolled back\n" || image() != "nginx:2" {
		t.Errorf("undo = %q, image %s", out, image())
	}
	if out := c.mustRun("", "rollout", "undo", "sts/web", "--to-revision=2"); out != "statefulset.apps/web skipped rollback (current template already matches revision 2)\n" {
		t.Errorf("second undo = %q", out)
	}
	c.wantFail("error: unable to find specified revision 9 in history", "rollout", "undo", "sts/web", "--to-revision=9")

	// kubectl's StatefulSet status viewer (the default strategy is a
	// RollingUpdate with partition 0).
	setStatus := func(st api.StatefulSetStatus) {
		t.Helper()
		s, err := sets.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		st.ObservedGeneration = s.Generation
		s.Status = st
		if _, err := sets.UpdateStatus(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(api.StatefulSetStatus{Replicas: 2, ReadyReplicas: 1})
	if out := c.mustRun("", "rollout", "status", "sts/web", "--watch=false"); out != "Waiting for 1 pods to be ready...\n" {
		t.Errorf("status = %q", out)
	}
	setStatus(api.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 1})
	if out := c.mustRun("", "rollout", "status", "sts/web", "--watch=false"); out != "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...\n" {
		t.Errorf("status = %q", out)
	}
	setStatus(api.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2})
	if out := c.mustRun("", "rollout", "status", "sts/web"); out != "partitioned roll out complete: 2 new pods have been updated...\n" {
		t.Errorf("status = %q", out)
	}

	if out := c.mustRun("", "rollout", "restart", "sts/web"); out != "statefulset.apps/web restarted\n" {
		t.Errorf("restart = %q", out)
	}
	if s, _ := sets.Get(ctx, "web"); s.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("restart left template annotations %v", s.Spec.Template.Annotations)
	}
	if out := c.mustRun("", "scale", "statefulset/web", "--replicas=4"); out != "statefulset.apps/web scaled\n" {
		t.Errorf("scale = %q", out)
	}
	if s, _ := sets.Get(ctx, "web"); *s.Spec.Replicas != 4 {
		t.Errorf("replicas %d after scale", *s.Spec.Replicas)
	}
	// Lines compared with their runs of spaces folded (tabwriter columns).
	fold := func(s string) string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		return strings.Join(lines, "\n")
	}
	out := fold(c.mustRun("", "describe", "sts/web"))
	for _, w := range []string{"Name: web\n", "Service Name: nginx\n", "Pod Management Policy: OrderedReady\n",
		"Replicas: 4 desired | 2 total\n", "Update Strategy: RollingUpdate\nPartition: 0\nMaxUnavailable: 1\n",
		"Persistent Volume Claim Retention Policy:\nWhenDeleted: Retain\nWhenScaled: Retain\n", "Pods Status: 0 Running / 0 Waiting / 0 Succeeded / 0 Failed\n",
		"Image: nginx:2", "Volume Claims: <none>\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("describe sts lacks %q:\n%s", w, out)
		}
	}
}

const ds1 = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: agent:1
`

func TestIntegrationRolloutDaemonSet(t *testing.T) {
	c := startCluster(t)
	c.mustRun(ds1, "apply", "-f", "-")
	ctx := context.Background()
	dss := client.Resource[api.DaemonSet](c.client).Namespace("default")
	ds, err := dss.Get(ctx, "agent")
	if err != nil {
		t.Fatal(err)
	}
	ds.Status = api.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2}
	if _, err := dss.UpdateStatus(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if out := c.mustRun("", "rollout", "status", "ds/agent", "--watch=false"); out != "Waiting for daemon set \"agent\" rollout to finish: 2 of 3 updated pods are available...\n" {
		t.Errorf("status = %q", out)
	}
	if out := c.mustRun("", "rollout", "history", "daemonset/agent"); out != "daemonset.apps/agent\nNo rollout history found.\n" {
		t.Errorf("history = %q", out)
	}
	c.wantFail("error: no last revision to roll back to", "rollout", "undo", "ds/agent")
	out := c.mustRun("", "describe", "ds/agent")
	for _, w := range []string{"Selector:", "app=agent\n", "Node-Selector:  <none>\n", "Desired Number of Nodes Scheduled: 3\n",
		"Number of Nodes Scheduled with Available Pods: 2\n", "Number of Nodes Misscheduled: 0\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("describe ds lacks %q:\n%s", w, out)
		}
	}
	if out := c.mustRun("", "rollout", "restart", "ds/agent"); out != "daemonset.apps/agent restarted\n" {
		t.Errorf("restart = %q", out)
	}
}
