package garbagecollector_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const ns = "gc"

func ptr[T any](v T) *T { return &v }

var labels = map[string]string{"app": "web"}

func template() api.PodTemplateSpec {
	return api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
}

// owner creates a ReplicaSet (no replicaset controller runs: it is just an
// owner) and n unbound pods it controls; extra finalizers go on the pods.
func owner(t *testing.T, ctx context.Context, c *client.Client, name string, n int, podFinalizers ...string) *api.ReplicaSet {
	t.Helper()
	rs, err := client.Resource[api.ReplicaSet](c).Namespace(ns).Create(ctx, &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       api.ReplicaSetSpec{Replicas: ptr(int32(n)), Selector: &api.LabelSelector{MatchLabels: labels}, Template: template()}})
	if err != nil {
		t.Fatal(err)
	}
	dependents(t, ctx, c, controller.NewControllerRef(&rs.ObjectMeta, "apps/v1", "ReplicaSet"), name, n, podFinalizers...)
	return rs
}

func dependents(t *testing.T, ctx context.Context, c *client.Client, ref api.OwnerReference, prefix string, n int, finalizers ...string) {
	t.Helper()
	for i := range n {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", prefix, i), Labels: labels,
			OwnerReferences: []api.OwnerReference{ref}, Finalizers: finalizers}, Spec: template().Spec}
		if _, err := client.Resource[api.Pod](c).Namespace(ns).Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

func podsOf(t *testing.T, ctx context.Context, c *client.Client, prefix string) []api.Pod {
	t.Helper()
	l, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []api.Pod
	for _, p := range l.Items {
		if len(p.Name) > len(prefix) && p.Name[:len(prefix)+1] == prefix+"-" {
			out = append(out, p)
		}
	}
	return out
}

func gone[T any, PT interface {
	*T
	api.Object
}](ctx context.Context, rc *client.ResourceClient[T, PT], name string) func() (bool, error) {
	return func() (bool, error) {
		_, err := rc.Get(ctx, name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
}

func TestDeletionPropagation(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"garbagecollector"}, nil)
	ctx := cl.Context(3 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	rsClient := client.Resource[api.ReplicaSet](c).Namespace(ns)
	podClient := client.Resource[api.Pod](c).Namespace(ns)

	t.Run("background", func(t *testing.T) {
		owner(t, ctx, c, "bg", 3)
		if err := rsClient.Delete(ctx, "bg", nil); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, "background dependents deleted", func() (bool, error) { return len(podsOf(t, ctx, c, "bg")) == 0, nil })
	})

	t.Run("foreground", func(t *testing.T) {
		// The pods carry a finalizer of the test's, so they linger while
		// "terminating" and the owner must wait for them.
		owner(t, ctx, c, "fg", 2, "test.minik8s.io/hold")
		fg := api.DeletePropagationForeground
		if err := rsClient.Delete(ctx, "fg", &api.DeleteOptions{PropagationPolicy: &fg}); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, "foreground dependents marked for deletion", func() (bool, error) {
			pods := podsOf(t, ctx, c, "fg")
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					return false, nil
				}
			}
			return len(pods) == 2, nil
		})
		time.Sleep(time.Second)
		rs, err := rsClient.Get(ctx, "fg")
		if err != nil {
			t.Fatalf("owner gone while its dependents remain: %v", err)
		}
		if rs.DeletionTimestamp == nil || !slices.Contains(rs.Finalizers, api.FinalizerDeleteDependents) {
			t.Fatalf("owner metadata = %+v", rs.ObjectMeta)
		}
		for _, p := range podsOf(t, ctx, c, "fg") {
			p.Finalizers = nil
			if _, err := podClient.Update(ctx, &p); err != nil {
				t.Fatal(err)
			}
		}
		cl.Eventually(30*time.Second, "foreground owner deleted after its dependents", gone(ctx, rsClient, "fg"))
		if n := len(podsOf(t, ctx, c, "fg")); n != 0 {
			t.Fatalf("%d dependents left", n)
		}
	})

	t.Run("orphan", func(t *testing.T) {
		owner(t, ctx, c, "or", 2)
		orphan := api.DeletePropagationOrphan
		if err := rsClient.Delete(ctx, "or", &api.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, "orphaning owner deleted", gone(ctx, rsClient, "or"))
		pods := podsOf(t, ctx, c, "or")
		if len(pods) != 2 {
			t.Fatalf("orphaned pods = %d, want 2", len(pods))
		}
		for _, p := range pods {
			if len(p.OwnerReferences) != 0 || p.DeletionTimestamp != nil {
				t.Fatalf("orphan %s: ownerReferences %+v deletionTimestamp %v", p.Name, p.OwnerReferences, p.DeletionTimestamp)
			}
		}
		// They stay orphans.
		time.Sleep(time.Second)
		if n := len(podsOf(t, ctx, c, "or")); n != 2 {
			t.Fatalf("orphans deleted later: %d left", n)
		}
	})

	t.Run("deployment to replicaset to pod", func(t *testing.T) {
		for _, policy := range []api.DeletionPropagation{"", api.DeletePropagationForeground} {
			name := "dep" + map[api.DeletionPropagation]string{"": "bg", api.DeletePropagationForeground: "fg"}[policy]
			d, err := client.Resource[api.Deployment](c).Namespace(ns).Create(ctx, &api.Deployment{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
				Spec: api.DeploymentSpec{Replicas: ptr(int32(2)), Selector: &api.LabelSelector{MatchLabels: labels}, Template: template()}})
			if err != nil {
				t.Fatal(err)
			}
			rs, err := rsClient.Create(ctx, &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name + "-rs",
				OwnerReferences: []api.OwnerReference{controller.NewControllerRef(&d.ObjectMeta, "apps/v1", "Deployment")}},
				Spec: api.ReplicaSetSpec{Replicas: ptr(int32(2)), Selector: &api.LabelSelector{MatchLabels: labels}, Template: template()}})
			if err != nil {
				t.Fatal(err)
			}
			dependents(t, ctx, c, controller.NewControllerRef(&rs.ObjectMeta, "apps/v1", "ReplicaSet"), name+"-rs", 2)
			var opts *api.DeleteOptions
			if policy != "" {
				opts = &api.DeleteOptions{PropagationPolicy: &policy}
			}
			if err := client.Resource[api.Deployment](c).Namespace(ns).Delete(ctx, name, opts); err != nil {
				t.Fatal(err)
			}
			cl.Eventually(30*time.Second, string(policy)+" deployment, its replicaset and pods deleted", func() (bool, error) {
				if len(podsOf(t, ctx, c, name+"-rs")) != 0 {
					return false, nil
				}
				if ok, err := gone(ctx, rsClient, name+"-rs")(); !ok {
					return false, err
				}
				return gone(ctx, client.Resource[api.Deployment](c).Namespace(ns), name)()
			})
		}
	})

	t.Run("dependency cycle", func(t *testing.T) {
		// The conformance spec 'Garbage collector should not be blocked by
		// dependency circle': pod1 owned by pod3, pod2 by pod1, pod3 by
		// pod2, every reference blocking; pod1 deleted in the foreground.
		var pods [3]*api.Pod
		for i := range pods {
			p, err := podClient.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cycle-%d", i)}, Spec: template().Spec})
			if err != nil {
				t.Fatal(err)
			}
			pods[i] = p
		}
		for i, p := range pods {
			o := pods[(i+2)%3]
			p.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: o.Name, UID: o.UID, Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
			if _, err := podClient.Update(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		fg := api.DeletePropagationForeground
		uid := pods[0].UID
		if err := podClient.Delete(ctx, pods[0].Name, &api.DeleteOptions{PropagationPolicy: &fg, Preconditions: &api.Preconditions{UID: &uid}}); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(60*time.Second, "every pod of the cycle deleted", func() (bool, error) {
			left := podsOf(t, ctx, c, "cycle")
			return len(left) == 0, nil
		})
	})

	t.Run("dangling reference beside a live owner", func(t *testing.T) {
		// A dependent with two owners, one alive: only the dead reference goes.
		rs := owner(t, ctx, c, "two", 0)
		dead := api.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "never-existed", UID: "00000000-0000-0000-0000-000000000000"}
		alive := controller.NewControllerRef(&rs.ObjectMeta, "apps/v1", "ReplicaSet")
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "two-0", Labels: labels, OwnerReferences: []api.OwnerReference{dead, alive}}, Spec: template().Spec}
		if _, err := podClient.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, "dangling reference dropped", func() (bool, error) {
			p, err := podClient.Get(ctx, "two-0")
			if err != nil {
				return false, err
			}
			return len(p.OwnerReferences) == 1 && p.OwnerReferences[0].UID == rs.UID, nil
		})
	})
}

// With the real replicaset and deployment controllers: deleting a
// Deployment in each propagation mode removes (or orphans) what they made,
// and the controllers do not re-create pods under an owner being deleted.
func TestWithWorkloadControllers(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"garbagecollector", "replicaset", "deployment"}, nil)
	ctx := cl.Context(3 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	deps := client.Resource[api.Deployment](c).Namespace(ns)
	for _, policy := range []api.DeletionPropagation{api.DeletePropagationBackground, api.DeletePropagationForeground, api.DeletePropagationOrphan} {
		t.Run(string(policy), func(t *testing.T) {
			name := "d-" + strings.ToLower(string(policy))
			sel := map[string]string{"app": name}
			tmpl := template()
			tmpl.Labels = sel
			if _, err := deps.Create(ctx, &api.Deployment{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
				Spec: api.DeploymentSpec{Replicas: ptr(int32(3)), Selector: &api.LabelSelector{MatchLabels: sel}, Template: tmpl}}); err != nil {
				t.Fatal(err)
			}
			count := func() (rs, pods int) {
				rl, err := client.Resource[api.ReplicaSet](c).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: "app=" + name})
				if err != nil {
					t.Fatal(err)
				}
				pl, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: "app=" + name})
				if err != nil {
					t.Fatal(err)
				}
				return len(rl.Items), len(pl.Items)
			}
			cl.Eventually(60*time.Second, "deployment's pods", func() (bool, error) {
				rs, pods := count()
				return rs == 1 && pods == 3, fmt.Errorf("%d replicasets, %d pods", rs, pods)
			})
			if err := deps.Delete(ctx, name, &api.DeleteOptions{PropagationPolicy: &policy}); err != nil {
				t.Fatal(err)
			}
			cl.Eventually(60*time.Second, "deployment gone", gone(ctx, deps, name))
			if policy == api.DeletePropagationOrphan {
				time.Sleep(2 * time.Second)
				if rs, pods := count(); rs != 1 || pods != 3 {
					t.Fatalf("orphaned: %d replicasets, %d pods; want 1, 3", rs, pods)
				}
				return
			}
			cl.Eventually(60*time.Second, "replicaset and pods gone", func() (bool, error) {
				rs, pods := count()
				return rs == 0 && pods == 0, fmt.Errorf("%d replicasets, %d pods", rs, pods)
			})
			time.Sleep(time.Second)
			if rs, pods := count(); rs != 0 || pods != 0 {
				t.Fatalf("re-created after deletion: %d replicasets, %d pods", rs, pods)
			}
		})
	}
}
