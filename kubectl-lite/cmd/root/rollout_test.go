package root_test

import (
	"context"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

const deploy3 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: busybox:3
`

func TestIntegrationRolloutStatus(t *testing.T) {
	c := startCluster(t)
	c.mustRun(deploy3, "apply", "-f", "-")
	ctx := context.Background()
	deps := client.Resource[api.Deployment](c.client).Namespace("default")
	setStatus := func(s api.DeploymentStatus) {
		t.Helper()
		d, err := deps.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		s.ObservedGeneration = d.Generation
		d.Status = s
		if _, err := deps.UpdateStatus(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	if out := c.mustRun("", "rollout", "status", "deploy/web", "--watch=false"); out != "Waiting for deployment spec update to be observed...\n" {
		t.Errorf("status --watch=false = %q", out)
	}
	out, errOut, code := c.run("", "rollout", "status", "deploy/web", "--timeout=1s")
	if code != 1 || errOut != "error: timed out waiting for the condition\n" || !strings.HasPrefix(out, "Waiting for deployment spec update to be observed...\n") {
		t.Errorf("status --timeout: exit %d stdout %q stderr %q", code, out, errOut)
	}

	s := c.start("rollout", "status", "deployment/web", "--timeout=80s")
	line := s.waitLine(0, "the first status", func(l string) bool { return l == "Waiting for deployment spec update to be observed..." })
	for _, step := range []struct {
		status api.DeploymentStatus
		want   string
	}{
		{api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1}, `Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...`},
		{api.DeploymentStatus{Replicas: 4, UpdatedReplicas: 3}, `Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...`},
		{api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1}, `Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...`},
		{api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3, ReadyReplicas: 3}, `deployment "web" successfully rolled out`},
	} {
		setStatus(step.status)
		want := step.want
		line = s.waitLine(line+1, want, func(l string) bool { return l == want })
	}
	if code := s.wait(); code != 0 {
		t.Errorf("rollout status exit %d, stderr %q", code, s.stderr.String())
	}

	// Past its progress deadline the rollout has failed: exit 1.
	setStatus(api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, Conditions: []api.DeploymentCondition{
		{Type: "Progressing", Status: api.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-1" has timed out progressing.`}}})
	c.wantFail(`error: deployment "web" exceeded its progress deadline`, "rollout", "status", "deploy/web")
	c.wantFail(`error: no rollout support for configmap: only deployments, statefulsets and daemonsets are supported`, "rollout", "status", "cm/x")
	c.wantFail(`error: no rollout support for statefulset.apps: only deployments are supported`, "rollout", "pause", "sts/x")
}

func TestIntegrationRolloutHistoryUndo(t *testing.T) {
	c := startCluster(t)
	c.mustRun(deploy3, "apply", "-f", "-")
	ctx := context.Background()
	deps := client.Resource[api.Deployment](c.client).Namespace("default")
	d, err := deps.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	rss := client.Resource[api.ReplicaSet](c.client).Namespace("default")
	for rev, cause := range map[string]string{"1": "kubectl-lite create", "2": "", "3": "kubectl-lite set image app=busybox:3"} {
		hash := "h" + rev
		ann := map[string]string{"deployment.kubernetes.io/revision": rev, "note": "from-rs-" + rev}
		if cause != "" {
			ann["kubernetes.io/change-cause"] = cause
		}
		one := int32(0)
		_, err := rss.Create(ctx, &api.ReplicaSet{
			ObjectMeta: api.ObjectMeta{Name: "web-" + hash, Labels: map[string]string{"app": "web", "pod-template-hash": hash}, Annotations: ann,
				OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: &yes}}},
			Spec: api.ReplicaSetSpec{Replicas: &one,
				Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": hash}},
				Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web", "pod-template-hash": hash}},
					Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "busybox:" + rev}}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A ReplicaSet matching the selector but owned by someone else is not history.
	if _, err := rss.Create(ctx, &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "stranger", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"deployment.kubernetes.io/revision": "7"}},
		Spec: api.ReplicaSetSpec{Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "busybox:7"}}}}},
	}); err != nil {
		t.Fatal(err)
	}

	want := "deployment.apps/web\nREVISION  CHANGE-CAUSE\n1         kubectl-lite create\n2         <none>\n3         kubectl-lite set image app=busybox:3\n\n"
	if out := c.mustRun("", "rollout", "history", "deployment/web"); out != want {
		t.Errorf("history =\n%q\nwant\n%q", out, want)
	}
	out := c.mustRun("", "rollout", "history", "deploy/web", "--revision=1")
	for _, w := range []string{"deployment.apps/web with revision #1\n", "Pod Template:\n", "pod-template-hash=h1", "Image:         busybox:1", "kubernetes.io/change-cause: kubectl-lite create"} {
		if !strings.Contains(out, w) {
			t.Errorf("history --revision=1 lacks %q:\n%s", w, out)
		}
	}
	image := func() string {
		t.Helper()
		d, err := deps.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.Spec.Template.Labels["pod-template-hash"]; ok {
			t.Errorf("undo copied the pod-template-hash label: %v", d.Spec.Template.Labels)
		}
		return d.Spec.Template.Spec.Containers[0].Image + " " + d.Annotations["note"]
	}
	if out := c.mustRun("", "rollout", "undo", "deployment/web"); out != "deployment.apps/web rolled back\n" {
		t.Errorf("undo = %q", out)
	}
	if got := image(); got != "busybox:2 from-rs-2" {
		t.Errorf("after undo: image and note %q, want revision 2's", got)
	}
	if out := c.mustRun("", "rollout", "undo", "deployment/web", "--to-revision=1"); out != "deployment.apps/web rolled back\n" {
		t.Errorf("undo --to-revision=1 = %q", out)
	}
	if got := image(); got != "busybox:1 from-rs-1" {
		t.Errorf("after undo to 1: %q", got)
	}
	if out := c.mustRun("", "rollout", "undo", "deployment/web", "--to-revision=1"); out != "deployment.apps/web skipped rollback (current template already matches revision 1)\n" {
		t.Errorf("second undo to 1 = %q", out)
	}
	c.wantFail("error: unable to find specified revision 9 in history", "rollout", "undo", "deployment/web", "--to-revision=9")

	if out := c.mustRun("", "rollout", "pause", "deployment/web"); out != "deployment.apps/web paused\n" {
		t.Errorf("pause = %q", out)
	}
	c.wantFail("error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/web' and try again", "rollout", "undo", "deployment/web")
	if out := c.mustRun("", "rollout", "resume", "deployment/web"); out != "deployment.apps/web resumed\n" {
		t.Errorf("resume = %q", out)
	}
}
