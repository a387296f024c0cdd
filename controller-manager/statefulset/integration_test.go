package statefulset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const timeout = 60 * time.Second

func ptr[T any](v T) *T { return &v }

func webSet(ns string, n int32) *api.StatefulSet {
	lbl := map[string]string{"app": "nginx"}
	return &api.StatefulSet{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: api.StatefulSetSpec{
			Replicas: ptr(n), ServiceName: "nginx", Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "nginx", Image: "nginx:1",
					VolumeMounts: []api.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}}}}}},
			VolumeClaimTemplates: []api.PersistentVolumeClaim{{ObjectMeta: api.ObjectMeta{Name: "www"},
				Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{"ReadWriteOnce"},
					Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": resource.MustParse("1Gi")}}}}},
		},
	}
}

type env struct {
	*controllermanagertest.Cluster
	ns string
}

func start(t *testing.T, ns string) *env {
	cl := controllermanagertest.Start(t, []string{"statefulset"}, nil)
	cl.Namespace(ns)
	return &env{cl, ns}
}

func (e *env) pods() map[string]*api.Pod {
	e.T.Helper()
	l, err := client.Resource[api.Pod](e.Client).Namespace(e.ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	out := map[string]*api.Pod{}
	for i := range l.Items {
		out[l.Items[i].Name] = &l.Items[i]
	}
	return out
}

func (e *env) set() *api.StatefulSet {
	e.T.Helper()
	s, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Get(context.Background(), "web")
	if err != nil {
		e.T.Fatal(err)
	}
	return s
}

func (e *env) updateSet(mutate func(*api.StatefulSet)) {
	e.T.Helper()
	sc := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns)
	for i := 0; ; i++ {
		s := e.set()
		mutate(s)
		_, err := sc.Update(context.Background(), s)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 10 {
			e.T.Fatal(err)
		}
	}
}

func (e *env) waitPods(what string, cond func(map[string]*api.Pod) bool) {
	e.T.Helper()
	e.Eventually(timeout, what, func() (bool, error) {
		p := e.pods()
		return cond(p), fmt.Errorf("pods %v", names(p))
	})
}

func names(pods map[string]*api.Pod) []string {
	var out []string
	for n, p := range pods {
		out = append(out, fmt.Sprintf("%s(%s,%s)", n, p.Status.Phase, p.Labels["controller-revision-hash"]))
	}
	slices.Sort(out)
	return out
}

// makeReady reports the pod Running and Ready, as its kubelet would.
func (e *env) makeReady(name string) { e.SetPodStatus(e.ns, name, api.PodRunning, "10.0.0.1", true) }

func TestOrderedReadyCreationAndScaleDown(t *testing.T) {
	e := start(t, "ordered")
	if _, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Create(context.Background(), webSet(e.ns, 3)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		e.waitPods(name+" created", func(p map[string]*api.Pod) bool { return p[name] != nil })
		// Its successor is not created while it is not Ready.
		time.Sleep(300 * time.Millisecond)
		pods := e.pods()
		if next := fmt.Sprintf("web-%d", i+1); pods[next] != nil {
			t.Fatalf("%s created before %s was Ready", next, name)
		}
		p := pods[name]
		if p.Spec.Hostname != name || p.Spec.Subdomain != "nginx" || p.Labels["statefulset.kubernetes.io/pod-name"] != name ||
			p.Labels["apps.kubernetes.io/pod-index"] != fmt.Sprint(i) || p.Labels["controller-revision-hash"] == "" {
			t.Fatalf("pod %s identity: hostname %q subdomain %q labels %v", name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
		}
		claim := fmt.Sprintf("www-web-%d", i)
		var vol *api.Volume
		for j := range p.Spec.Volumes {
			if p.Spec.Volumes[j].Name == "www" {
				vol = &p.Spec.Volumes[j]
			}
		}
		if vol == nil || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != claim {
			t.Fatalf("pod %s volumes %+v, want www from claim %s", name, p.Spec.Volumes, claim)
		}
		pvc, err := client.Resource[api.PersistentVolumeClaim](e.Client).Namespace(e.ns).Get(context.Background(), claim)
		if err != nil {
			t.Fatalf("claim %s: %v", claim, err)
		}
		if pvc.Labels["app"] != "nginx" || len(pvc.OwnerReferences) != 0 {
			t.Fatalf("claim %s labels %v owners %v", claim, pvc.Labels, pvc.OwnerReferences)
		}
		e.makeReady(name)
	}
	e.Eventually(timeout, "status of 3 ready replicas", func() (bool, error) {
		s := e.set()
		st := s.Status
		return st.Replicas == 3 && st.ReadyReplicas == 3 && st.AvailableReplicas == 3 && st.CurrentReplicas == 3 &&
			st.UpdatedReplicas == 3 && st.CurrentRevision != "" && st.CurrentRevision == st.UpdateRevision &&
			st.ObservedGeneration == s.Generation && st.CollisionCount != nil, fmt.Errorf("status %+v", st)
	})
	if !slices.ContainsFunc(e.events("SuccessfulCreate"), func(m string) bool { return m == "create Pod web-0 in StatefulSet web successful" }) {
		t.Errorf("events %q lack kube's create message", e.events("SuccessfulCreate"))
	}

	// Scale down to 1: web-2 goes first, and web-1 only after it is gone
	// (a finalizer holds web-2 terminating).
	pods := client.Resource[api.Pod](e.Client).Namespace(e.ns)
	if _, err := pods.Patch(context.Background(), "web-2", client.MergePatchType, []byte(`{"metadata":{"finalizers":["test/hold"]}}`)); err != nil {
		t.Fatal(err)
	}
	e.updateSet(func(s *api.StatefulSet) { s.Spec.Replicas = ptr(int32(1)) })
	e.waitPods("web-2 terminating", func(p map[string]*api.Pod) bool { return p["web-2"] != nil && p["web-2"].DeletionTimestamp != nil })
	time.Sleep(300 * time.Millisecond)
	if p := e.pods()["web-1"]; p == nil || p.DeletionTimestamp != nil {
		t.Fatalf("web-1 deleted while web-2 was terminating")
	}
	if _, err := pods.Patch(context.Background(), "web-2", client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	e.waitPods("only web-0 left", func(p map[string]*api.Pod) bool { return len(p) == 1 && p["web-0"] != nil })
	// Claims are retained (persistentVolumeClaimRetentionPolicy Retain).
	if _, err := client.Resource[api.PersistentVolumeClaim](e.Client).Namespace(e.ns).Get(context.Background(), "www-web-2"); err != nil {
		t.Fatalf("claim of a scaled-down pod: %v", err)
	}

	// A failed pod is re-created under the same name.
	uid := e.pods()["web-0"].UID
	e.SetPodStatus(e.ns, "web-0", api.PodFailed, "", false)
	e.waitPods("web-0 re-created", func(p map[string]*api.Pod) bool { return p["web-0"] != nil && p["web-0"].UID != uid })
}

// TestOrderedReadyScaleDownWaitsForUnhealthyPods scales 4 to 1 while pods
// are unhealthy: as kube's processCondemned, nothing goes while a kept pod
// is not Ready, nor while the next condemned pod is unhealthy behind
// another unhealthy one; the first unhealthy pod itself may go.
func TestOrderedReadyScaleDownWaitsForUnhealthyPods(t *testing.T) {
	e := start(t, "unhealthy")
	if _, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Create(context.Background(), webSet(e.ns, 4)); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		name := fmt.Sprintf("web-%d", i)
		e.waitPods(name+" created", func(p map[string]*api.Pod) bool { return p[name] != nil })
		e.makeReady(name)
	}
	e.Eventually(timeout, "4 ready replicas", func() (bool, error) {
		return e.set().Status.ReadyReplicas == 4, nil
	})
	unready := func(name string) { e.SetPodStatus(e.ns, name, api.PodRunning, "10.0.0.1", false) }
	for _, name := range []string{"web-0", "web-2", "web-3"} {
		unready(name)
	}
	e.Eventually(timeout, "1 ready replica", func() (bool, error) {
		return e.set().Status.ReadyReplicas == 1, nil
	})
	e.updateSet(func(s *api.StatefulSet) { s.Spec.Replicas = ptr(int32(1)) })
	noneDeleted := func(why string) {
		t.Helper()
		time.Sleep(time.Second)
		for n, p := range e.pods() {
			if p.DeletionTimestamp != nil || len(e.pods()) != 4 {
				t.Fatalf("%s: %s deleted (pods %v)", why, n, names(e.pods()))
			}
		}
	}
	noneDeleted("web-0 (kept) not Ready")
	e.makeReady("web-0")
	e.Eventually(timeout, "web-0 ready seen", func() (bool, error) {
		return e.set().Status.ReadyReplicas == 2, nil
	})
	noneDeleted("web-3 unhealthy behind web-2")
	// web-3 recovers: it goes, then web-2 (the first unhealthy pod), then
	// web-1.
	e.makeReady("web-3")
	e.waitPods("only web-0 left", func(p map[string]*api.Pod) bool { return len(p) == 1 && p["web-0"] != nil })
	// Events are named NAME.<hex nanoseconds> and listed by name: in order.
	var order []string
	for _, m := range e.events("SuccessfulDelete") {
		order = append(order, strings.Fields(m)[2])
	}
	if !slices.Equal(order, []string{"web-3", "web-2", "web-1"}) {
		t.Errorf("deleted %v, want web-3, web-2, web-1", order)
	}
}

func (e *env) events(reason string) []string {
	e.T.Helper()
	l, err := client.Resource[api.Event](e.Client).Namespace(e.ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for _, ev := range l.Items {
		if ev.Reason == reason {
			out = append(out, ev.Message)
		}
	}
	return out
}

func TestParallelCreatesAllAtOnce(t *testing.T) {
	e := start(t, "parallel")
	s := webSet(e.ns, 4)
	s.Spec.PodManagementPolicy = api.ParallelPodManagement
	if _, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	e.waitPods("4 pods with none ready", func(p map[string]*api.Pod) bool { return len(p) == 4 })
	for i := range 4 {
		if _, err := client.Resource[api.PersistentVolumeClaim](e.Client).Namespace(e.ns).Get(context.Background(), fmt.Sprintf("www-web-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRollingUpdatePartitionAndHistory(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"statefulset"}, nil)
	controllermanagertest.RunKubelet(t, cl.Client, controllermanagertest.KubeletOptions{Nodes: 2})
	e := &env{cl, "rolling"}
	cl.Namespace(e.ns)
	s := webSet(e.ns, 3)
	s.Spec.RevisionHistoryLimit = ptr(int32(2))
	s.Spec.UpdateStrategy = api.StatefulSetUpdateStrategy{Type: "RollingUpdate",
		RollingUpdate: &api.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(1))}}
	if _, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	e.Eventually(timeout, "3 ready replicas", func() (bool, error) {
		st := e.set().Status
		return st.ReadyReplicas == 3, fmt.Errorf("status %+v", st)
	})
	rev1 := e.set().Status.CurrentRevision

	image := func(p *api.Pod) string { return p.Spec.Containers[0].Image }
	e.updateSet(func(s *api.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	// web-2 is replaced before web-1; web-0 stays below the partition.
	var order []string
	e.Eventually(timeout, "web-1 and web-2 updated", func() (bool, error) {
		pods := e.pods()
		for _, n := range []string{"web-2", "web-1"} {
			if p := pods[n]; p != nil && image(p) == "nginx:2" && !slices.Contains(order, n) {
				order = append(order, n)
			}
		}
		st := e.set().Status
		return len(order) == 2 && st.UpdatedReplicas == 2 && st.ReadyReplicas == 3, fmt.Errorf("order %v status %+v pods %v", order, st, names(pods))
	})
	if !slices.Equal(order, []string{"web-2", "web-1"}) {
		t.Fatalf("update order %v, want highest ordinal first", order)
	}
	st := e.set().Status
	if p := e.pods()["web-0"]; image(p) != "nginx:1" || p.Labels["controller-revision-hash"] != rev1 ||
		st.CurrentRevision != rev1 || st.UpdateRevision == rev1 || st.CurrentReplicas != 1 {
		t.Fatalf("web-0 image %s rev %s; status %+v", image(p), p.Labels["controller-revision-hash"], st)
	}

	// Dropping the partition finishes the rollout.
	e.updateSet(func(s *api.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr(int32(0)) })
	e.Eventually(timeout, "rollout complete", func() (bool, error) {
		s := e.set()
		st := s.Status
		return st.UpdatedReplicas == 3 && st.ReadyReplicas == 3 && st.CurrentRevision == st.UpdateRevision && st.CurrentReplicas == 3 &&
			image(e.pods()["web-0"]) == "nginx:2", fmt.Errorf("status %+v", st)
	})

	// More templates than the history limit: only 2 old revisions stay,
	// plus the live one.
	for i := 3; i <= 6; i++ {
		e.updateSet(func(s *api.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("nginx:%d", i) })
		e.Eventually(timeout, fmt.Sprintf("rollout to nginx:%d", i), func() (bool, error) {
			st := e.set().Status
			return st.UpdatedReplicas == 3 && st.ReadyReplicas == 3 && st.CurrentRevision == st.UpdateRevision &&
				image(e.pods()["web-0"]) == fmt.Sprintf("nginx:%d", i), fmt.Errorf("status %+v", st)
		})
	}
	e.Eventually(timeout, "history pruned to 3 revisions", func() (bool, error) {
		l, err := client.Resource[api.ControllerRevision](e.Client).Namespace(e.ns).List(context.Background(), client.ListOptions{})
		if err != nil {
			return false, err
		}
		var revs []string
		for _, r := range l.Items {
			revs = append(revs, fmt.Sprintf("%s#%d", r.Name, r.Revision))
			if !strings.HasPrefix(r.Name, "web-") || r.Labels["controller-revision-hash"] == "" {
				return false, fmt.Errorf("revision %s labels %v", r.Name, r.Labels)
			}
		}
		return len(l.Items) == 3, fmt.Errorf("revisions %v", revs)
	})
}

func TestClaimRetentionWhenScaledDelete(t *testing.T) {
	e := start(t, "retention")
	s := webSet(e.ns, 2)
	s.Spec.PodManagementPolicy = api.ParallelPodManagement
	s.Spec.PersistentVolumeClaimRetentionPolicy = &api.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Retain", WhenScaled: "Delete"}
	if _, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	e.waitPods("2 pods", func(p map[string]*api.Pod) bool { return len(p) == 2 })
	uid := e.pods()["web-1"].UID
	e.updateSet(func(s *api.StatefulSet) { s.Spec.Replicas = ptr(int32(1)) })
	e.waitPods("web-1 gone", func(p map[string]*api.Pod) bool { return len(p) == 1 })
	// No garbage collector runs here: the claim of the scaled-down pod is
	// left owned by it, that of web-0 by no one.
	claims := client.Resource[api.PersistentVolumeClaim](e.Client).Namespace(e.ns)
	c1, err := claims.Get(context.Background(), "www-web-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.OwnerReferences) != 1 || c1.OwnerReferences[0].UID != uid || c1.OwnerReferences[0].Kind != "Pod" {
		t.Fatalf("owners of www-web-1 %+v, want pod web-1 (%s)", c1.OwnerReferences, uid)
	}
	c0, err := claims.Get(context.Background(), "www-web-0")
	if err != nil || len(c0.OwnerReferences) != 0 {
		t.Fatalf("www-web-0 owners %+v, %v", c0, err)
	}
}

func TestOnDeleteReplacesOnlyDeletedPods(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"statefulset"}, nil)
	controllermanagertest.RunKubelet(t, cl.Client, controllermanagertest.KubeletOptions{Nodes: 2})
	e := &env{cl, "ondelete"}
	cl.Namespace(e.ns)
	s := webSet(e.ns, 2)
	s.Spec.UpdateStrategy = api.StatefulSetUpdateStrategy{Type: "OnDelete"}
	if _, err := client.Resource[api.StatefulSet](e.Client).Namespace(e.ns).Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	e.Eventually(timeout, "2 ready replicas", func() (bool, error) {
		st := e.set().Status
		return st.ReadyReplicas == 2, fmt.Errorf("status %+v", st)
	})
	e.updateSet(func(s *api.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	e.Eventually(timeout, "the update revision observed", func() (bool, error) {
		s := e.set()
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != s.Status.CurrentRevision, fmt.Errorf("status %+v", s.Status)
	})
	time.Sleep(300 * time.Millisecond)
	for n, p := range e.pods() {
		if p.Spec.Containers[0].Image != "nginx:1" {
			t.Fatalf("%s replaced under OnDelete", n)
		}
	}
	if err := client.Resource[api.Pod](e.Client).Namespace(e.ns).Delete(context.Background(), "web-0", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually(timeout, "web-0 re-created at the update revision", func() (bool, error) {
		pods := e.pods()
		st := e.set().Status
		return pods["web-0"] != nil && pods["web-0"].Spec.Containers[0].Image == "nginx:2" && pods["web-1"].Spec.Containers[0].Image == "nginx:1" &&
			st.UpdatedReplicas == 1 && st.CurrentReplicas == 1 && st.ReadyReplicas == 2, fmt.Errorf("pods %v status %+v", names(pods), st)
	})
}
