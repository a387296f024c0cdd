package deployment_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

const rolloutTimeout = 60 * time.Second

func (cl *cluster) updateDeployment(ns, name string, mutate func(d *api.Deployment)) {
	cl.t.Helper()
	dc := client.Resource[api.Deployment](cl.c).Namespace(ns)
	for i := 0; ; i++ {
		d, err := dc.Get(context.Background(), name)
		if err != nil {
			cl.t.Fatal(err)
		}
		mutate(d)
		if _, err = dc.Update(context.Background(), d); err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 20 {
			cl.t.Fatalf("update deployment %s: %v", name, err)
		}
	}
}

func (cl *cluster) scale(resource, ns, name string, replicas int32) {
	cl.t.Helper()
	info, _ := api.FindResource(resource)
	body := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	if err := cl.c.Dynamic(info).Namespace(ns).Subresource(name, "scale").Patch(context.Background(), client.MergePatchType, body, nil); err != nil {
		cl.t.Fatalf("scale %s %s: %v", resource, name, err)
	}
}

func (cl *cluster) replicaSets(ns string) []api.ReplicaSet {
	cl.t.Helper()
	l, err := client.Resource[api.ReplicaSet](cl.c).Namespace(ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		cl.t.Fatal(err)
	}
	return l.Items
}

func (cl *cluster) rsByRevision(ns, rev string) *api.ReplicaSet {
	for _, rs := range cl.replicaSets(ns) {
		if rs.Annotations[api.RevisionAnnotation] == rev {
			return &rs
		}
	}
	return nil
}

func (cl *cluster) eventMessages(ns, reason string) []string {
	cl.t.Helper()
	l, err := client.Resource[api.Event](cl.c).Namespace(ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		cl.t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

func (cl *cluster) waitLivePods(ns string, n int) {
	cl.t.Helper()
	waitFor(cl.t, rolloutTimeout, fmt.Sprintf("%d live pods in %s", n, ns), func() (bool, error) {
		got := len(cl.livePods(ns))
		return got == n, fmt.Errorf("%d live pods", got)
	})
}

func TestReplicaSetScaleUpDown(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(3, 0, 4)
	cl.runControllerManager(cl.cmOptions(false))
	createNamespace(t, cl.c, "rs")
	lbl := map[string]string{"app": "web"}
	rs := &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Namespace: "rs", Name: "web"},
		Spec: api.ReplicaSetSpec{Replicas: ptr(int32(3)), Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl}, Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "img:1"}}}}},
	}
	// An orphan that matches is adopted instead of a fourth pod being made.
	orphan := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "rs", Name: "orphan", Labels: lbl}, Spec: rs.Spec.Template.Spec}
	if _, err := client.Resource[api.Pod](cl.c).Namespace("rs").Create(context.Background(), orphan); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.ReplicaSet](cl.c).Namespace("rs").Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int32{3, 7, 1} {
		if n != 3 {
			cl.scale("replicasets", "rs", "web", n)
		}
		waitFor(t, rolloutTimeout, fmt.Sprintf("replicaset at %d ready replicas", n), func() (bool, error) {
			got, err := client.Resource[api.ReplicaSet](cl.c).Namespace("rs").Get(context.Background(), "web")
			if err != nil {
				return false, err
			}
			st := got.Status
			return st.Replicas == n && st.ReadyReplicas == n && st.AvailableReplicas == n && st.FullyLabeledReplicas == n &&
				st.ObservedGeneration == got.Generation && len(cl.livePods("rs")) == int(n), fmt.Errorf("status %+v", st)
		})
		if n == 3 {
			p, err := client.Resource[api.Pod](cl.c).Namespace("rs").Get(context.Background(), "orphan")
			if err != nil || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID == "" || p.OwnerReferences[0].Kind != "ReplicaSet" {
				t.Fatalf("orphan not adopted: %v %+v", err, p)
			}
		}
	}
	for _, p := range cl.livePods("rs") {
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != "web" {
			t.Errorf("pod %s owners = %+v", p.Name, p.OwnerReferences)
		}
	}
	// Events are recorded asynchronously: wait for them, then check that
	// no more came than the scaling made.
	for reason, want := range map[string]int{"SuccessfulCreate": 6, "SuccessfulDelete": 6} { // 2 then 4 created, 6 deleted
		waitFor(t, rolloutTimeout, fmt.Sprintf("%d %s events", want, reason), func() (bool, error) {
			n := len(cl.eventMessages("rs", reason))
			return n >= want, fmt.Errorf("%d events", n)
		})
		if n := len(cl.eventMessages("rs", reason)); n != want {
			t.Errorf("%s events = %d, want %d", reason, n, want)
		}
	}
}

func TestDeploymentRollingUpdate(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(4, 50*time.Millisecond, 8)
	cl.runControllerManager(cl.cmOptions(false))
	createNamespace(t, cl.c, "roll")
	d := newDeployment("roll", "web", 10, "img:1")
	surge, unavailable := api.FromInt(3), api.FromString("20%") // 3 and 2 pods
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}}
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("roll").Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	got := cl.waitRolledOut("roll", "web", rolloutTimeout)
	if got.Annotations[api.RevisionAnnotation] != "1" {
		t.Errorf("revision = %q", got.Annotations[api.RevisionAnnotation])
	}
	rss := cl.replicaSets("roll")
	if len(rss) != 1 {
		t.Fatalf("replica sets = %d", len(rss))
	}
	rs1 := rss[0]
	hash := rs1.Labels[api.DefaultDeploymentUniqueLabelKey]
	if hash == "" || rs1.Name != "web-"+hash || rs1.Spec.Selector.MatchLabels[api.DefaultDeploymentUniqueLabelKey] != hash ||
		rs1.Spec.Template.Labels[api.DefaultDeploymentUniqueLabelKey] != hash {
		t.Errorf("replica set %s: labels %v selector %v", rs1.Name, rs1.Labels, rs1.Spec.Selector)
	}
	if rs1.Annotations[api.DesiredReplicasAnnotation] != "10" || rs1.Annotations[api.MaxReplicasAnnotation] != "13" || rs1.Annotations[api.RevisionAnnotation] != "1" {
		t.Errorf("replica set annotations = %v", rs1.Annotations)
	}
	if c := condition(got, api.DeploymentProgressing); c == nil || c.Reason != "NewReplicaSetAvailable" || c.Status != api.ConditionTrue {
		t.Errorf("Progressing = %+v", c)
	}
	if c := condition(got, api.DeploymentAvailable); c == nil || c.Reason != "MinimumReplicasAvailable" {
		t.Errorf("Available = %+v", c)
	}
	want := fmt.Sprintf("Scaled up replica set %s from 0 to 10", rs1.Name)
	if msgs := cl.eventMessages("roll", "ScalingReplicaSet"); !slices.Contains(msgs, want) {
		t.Errorf("ScalingReplicaSet events %q lack %q", msgs, want)
	}

	// The scale subresource resizes the only ReplicaSet.
	cl.scale("deployments", "roll", "web", 12)
	cl.waitRolledOut("roll", "web", rolloutTimeout)
	cl.waitLivePods("roll", 12)
	cl.scale("deployments", "roll", "web", 10)
	cl.waitRolledOut("roll", "web", rolloutTimeout)
	cl.waitLivePods("roll", 10)

	// A rolling update never has more than replicas+maxSurge live pods nor
	// fewer than replicas-maxUnavailable available ones.
	w := cl.watchPods("roll", func(pods map[string]*api.Pod) string {
		live, avail := counts(pods)
		if live > 13 || avail < 8 {
			return fmt.Sprintf("%d live (max 13), %d available (min 8)", live, avail)
		}
		return ""
	})
	cl.updateDeployment("roll", "web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "img:2" })
	got = cl.waitRolledOut("roll", "web", rolloutTimeout)
	cl.waitLivePods("roll", 10)
	if v, n := w.Violations(); len(v) > 0 {
		t.Errorf("rolling update broke its bounds (%d events): %v", n, v)
	} else if n < 20 {
		t.Errorf("only %d pod events seen during the rollout", n)
	}
	if got.Annotations[api.RevisionAnnotation] != "2" {
		t.Errorf("revision = %q", got.Annotations[api.RevisionAnnotation])
	}
	old := cl.rsByRevision("roll", "1")
	if old == nil || *old.Spec.Replicas != 0 {
		t.Errorf("old replica set = %+v", old)
	}
	for _, p := range cl.livePods("roll") {
		if p.Spec.Containers[0].Image != "img:2" || p.Labels[api.DefaultDeploymentUniqueLabelKey] == hash {
			t.Errorf("pod %s still of the old template", p.Name)
		}
	}
}

func TestDeploymentRecreate(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(2, 20*time.Millisecond, 4)
	cl.runControllerManager(cl.cmOptions(false))
	createNamespace(t, cl.c, "re")
	d := newDeployment("re", "db", 3, "db:1")
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RecreateDeploymentStrategyType}
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("re").Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	cl.waitRolledOut("re", "db", rolloutTimeout)
	// Recreate never runs old and new pods together, terminating ones included.
	w := cl.watchPods("re", func(pods map[string]*api.Pod) string {
		images := map[string]bool{}
		for _, p := range pods {
			images[p.Spec.Containers[0].Image] = true
		}
		if len(images) > 1 {
			return fmt.Sprintf("pods of several templates at once: %v", slices.Collect(maps.Keys(images)))
		}
		return ""
	})
	cl.updateDeployment("re", "db", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "db:2" })
	cl.waitRolledOut("re", "db", rolloutTimeout)
	cl.waitLivePods("re", 3)
	if v, _ := w.Violations(); len(v) > 0 {
		t.Errorf("recreate overlapped: %v", v)
	}
}

func TestDeploymentRolloverUndoAndHistory(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(3, 20*time.Millisecond, 8)
	cl.runControllerManager(cl.cmOptions(false))
	createNamespace(t, cl.c, "ro")
	d := newDeployment("ro", "api", 4, "api:1")
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("ro").Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	cl.waitRolledOut("ro", "api", rolloutTimeout)

	// Revision 2 never becomes ready; revision 3 rolls over it.
	cl.updateDeployment("ro", "api", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = brokenImage })
	waitFor(t, rolloutTimeout, "revision 2 scaled up", func() (bool, error) {
		rs := cl.rsByRevision("ro", "2")
		return rs != nil && rs.Status.Replicas > 0, nil
	})
	cl.updateDeployment("ro", "api", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "api:3" })
	got := cl.waitRolledOut("ro", "api", rolloutTimeout)
	if got.Annotations[api.RevisionAnnotation] != "3" {
		t.Errorf("revision after rollover = %q", got.Annotations[api.RevisionAnnotation])
	}
	waitFor(t, rolloutTimeout, "old replica sets at 0", func() (bool, error) {
		for _, rev := range []string{"1", "2"} {
			if rs := cl.rsByRevision("ro", rev); rs == nil || *rs.Spec.Replicas != 0 || rs.Status.Replicas != 0 {
				return false, fmt.Errorf("revision %s: %+v", rev, rs)
			}
		}
		return true, nil
	})

	// kubectl rollout undo --to-revision=1: copy that ReplicaSet's template.
	rs1 := cl.rsByRevision("ro", "1")
	cl.updateDeployment("ro", "api", func(d *api.Deployment) {
		d.Spec.Template = rs1.Spec.Template
		delete(d.Spec.Template.Labels, api.DefaultDeploymentUniqueLabelKey)
	})
	got = cl.waitRolledOut("ro", "api", rolloutTimeout)
	if got.Annotations[api.RevisionAnnotation] != "4" {
		t.Errorf("revision after undo = %q", got.Annotations[api.RevisionAnnotation])
	}
	back := cl.rsByRevision("ro", "4")
	if back == nil || back.UID != rs1.UID || back.Annotations[api.RevisionHistoryAnnotation] != "1" {
		t.Errorf("undo did not reuse revision 1's replica set: %+v", back)
	}
	for _, p := range cl.livePods("ro") {
		if p.Spec.Containers[0].Image != "api:1" {
			t.Errorf("pod %s runs %s after undo", p.Name, p.Spec.Containers[0].Image)
		}
	}
	if n := len(cl.replicaSets("ro")); n != 3 {
		t.Errorf("replica sets = %d, want 3", n)
	}
	// revisionHistoryLimit 1 keeps one old ReplicaSet: the newest (revision 3).
	cl.updateDeployment("ro", "api", func(d *api.Deployment) { d.Spec.RevisionHistoryLimit = ptr(int32(1)) })
	waitFor(t, rolloutTimeout, "old replica sets cleaned up", func() (bool, error) {
		var revs []string
		for _, rs := range cl.replicaSets("ro") {
			revs = append(revs, rs.Annotations[api.RevisionAnnotation])
		}
		slices.Sort(revs)
		return slices.Equal(revs, []string{"3", "4"}), fmt.Errorf("revisions %v", revs)
	})
}

func TestDeploymentProgressDeadlineAndPause(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(2, 0, 4)
	cl.runControllerManager(cl.cmOptions(false))
	createNamespace(t, cl.c, "pd")
	d := newDeployment("pd", "stuck", 2, brokenImage)
	d.Spec.ProgressDeadlineSeconds = ptr(int32(2))
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("pd").Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	waitFor(t, rolloutTimeout, "ProgressDeadlineExceeded", func() (bool, error) {
		got, err := client.Resource[api.Deployment](cl.c).Namespace("pd").Get(context.Background(), "stuck")
		if err != nil {
			return false, err
		}
		p, a := condition(got, api.DeploymentProgressing), condition(got, api.DeploymentAvailable)
		return p != nil && p.Status == api.ConditionFalse && p.Reason == "ProgressDeadlineExceeded" &&
			strings.Contains(p.Message, "has timed out progressing") &&
			a != nil && a.Status == api.ConditionFalse && a.Reason == "MinimumReplicasUnavailable", fmt.Errorf("conditions %+v", got.Status.Conditions)
	})

	// A paused deployment keeps its template change for later.
	createNamespace(t, cl.c, "pause")
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("pause").Create(context.Background(), newDeployment("pause", "web", 2, "web:1")); err != nil {
		t.Fatal(err)
	}
	cl.waitRolledOut("pause", "web", rolloutTimeout)
	cl.updateDeployment("pause", "web", func(d *api.Deployment) { d.Spec.Paused = true })
	waitFor(t, rolloutTimeout, "DeploymentPaused", func() (bool, error) {
		got, err := client.Resource[api.Deployment](cl.c).Namespace("pause").Get(context.Background(), "web")
		if err != nil {
			return false, err
		}
		c := condition(got, api.DeploymentProgressing)
		return c != nil && c.Reason == "DeploymentPaused" && c.Status == api.ConditionUnknown, nil
	})
	cl.updateDeployment("pause", "web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "web:2" })
	cl.scale("deployments", "pause", "web", 3) // scaling still works while paused
	cl.waitLivePods("pause", 3)
	if n := len(cl.replicaSets("pause")); n != 1 {
		t.Fatalf("a paused deployment made %d replica sets", n)
	}
	cl.updateDeployment("pause", "web", func(d *api.Deployment) { d.Spec.Paused = false })
	got := cl.waitRolledOut("pause", "web", rolloutTimeout)
	if got.Annotations[api.RevisionAnnotation] != "2" || len(cl.replicaSets("pause")) != 2 {
		t.Errorf("resume did not roll out: revision %q", got.Annotations[api.RevisionAnnotation])
	}
}
