package namespace_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// Deleting a namespace marks it Terminating; the controller deletes its
// content (here configmaps, secrets, services, unbound pods and a
// replicaset) and then finalizes it, so it disappears; other namespaces
// keep their content.
func TestNamespaceDeletion(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"namespace", "garbagecollector"}, nil)
	ctx := cl.Context(2 * time.Minute)
	c := cl.Client
	for _, ns := range []string{"doomed", "kept"} {
		cl.Namespace(ns)
		for i := range 3 {
			if _, err := client.Resource[api.ConfigMap](c).Namespace(ns).Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := client.Resource[api.Secret](c).Namespace(ns).Create(ctx, &api.Secret{ObjectMeta: api.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Resource[api.Pod](c).Namespace(ns).Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"},
			Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Resource[api.Service](c).Namespace(ns).Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "svc"},
			Spec: api.ServiceSpec{Selector: map[string]string{"app": "x"}, Ports: []api.ServicePort{{Port: 80}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// A configmap with a finalizer of the test's holds the namespace.
	cms := client.Resource[api.ConfigMap](c).Namespace("doomed")
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "held", Finalizers: []string{"test.minik8s.io/hold"}}}); err != nil {
		t.Fatal(err)
	}
	nsClient := client.Resource[api.Namespace](c)
	if err := nsClient.Delete(ctx, "doomed", nil); err != nil {
		t.Fatal(err)
	}
	// The rest of the content goes; the held configmap keeps the
	// namespace Terminating.
	cl.Eventually(30*time.Second, "content other than the held configmap deleted", func() (bool, error) {
		l, err := client.Resource[api.Pod](c).Namespace("doomed").List(ctx, client.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
	time.Sleep(2 * time.Second) // a few namespace controller passes
	ns, err := nsClient.Get(ctx, "doomed")
	if err != nil || ns.Status.Phase != api.NamespaceTerminating {
		t.Fatalf("namespace with remaining content: %+v, %v", ns, err)
	}
	held, err := cms.Get(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	held.Finalizers = nil
	if _, err := cms.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(60*time.Second, "namespace doomed gone", func() (bool, error) {
		_, err := nsClient.Get(ctx, "doomed")
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	for _, check := range []struct {
		what string
		n    func(ns string) (int, error)
	}{
		{"configmaps", func(ns string) (int, error) {
			l, err := client.Resource[api.ConfigMap](c).Namespace(ns).List(ctx, client.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
		{"pods", func(ns string) (int, error) {
			l, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
		{"secrets", func(ns string) (int, error) {
			l, err := client.Resource[api.Secret](c).Namespace(ns).List(ctx, client.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
		{"services", func(ns string) (int, error) {
			l, err := client.Resource[api.Service](c).Namespace(ns).List(ctx, client.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
	} {
		if n, err := check.n("doomed"); err != nil || n != 0 {
			t.Errorf("%s left in doomed: %d (%v)", check.what, n, err)
		}
		if n, err := check.n("kept"); err != nil || n == 0 {
			t.Errorf("%s of kept were deleted: %d (%v)", check.what, n, err)
		}
	}
	// Creating in it again works once it is gone: a fresh namespace.
	cl.Namespace("doomed")
}

// Deleting a namespace deletes its custom objects too: the controller
// finds their resources through discovery.
func TestNamespaceDeletionCustomResources(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"namespace"}, nil)
	ctx := cl.Context(2 * time.Minute)
	c := cl.Client
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gizmos.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gizmos","kind":"Gizmo"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	if _, err := c.Do(ctx, client.Request{Method: "POST", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: []byte(crd)}); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/doomed/gizmos"
	cl.Namespace("doomed")
	cl.Eventually(10*time.Second, "gizmos served", func() (bool, error) {
		_, err := c.Do(ctx, client.Request{Path: path})
		return err == nil, nil
	})
	if _, err := c.Do(ctx, client.Request{Method: "POST", Path: path, Body: []byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"g"}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := client.Resource[api.Namespace](c).Delete(ctx, "doomed", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(60*time.Second, "namespace doomed gone", func() (bool, error) {
		_, err := client.Resource[api.Namespace](c).Get(ctx, "doomed")
		return apierrors.IsNotFound(err), nil
	})
	if _, err := c.Do(ctx, client.Request{Path: path + "/g"}); !apierrors.IsNotFound(err) {
		t.Errorf("the gizmo outlived its namespace: %v", err)
	}
}

// A deleted namespace's pods go before the rest of its content, as kube
// v1.37's (the conformance spec 'OrderedNamespaceDeletion namespace
// deletion should delete pod first'): while a pod held by a finalizer is
// left, its configmap stays, and the namespace carries the deletion
// conditions; once the pod goes, so do the configmap and the namespace.
func TestNamespaceDeletionPodsFirst(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"namespace"}, nil)
	ctx := cl.Context(2 * time.Minute)
	c := cl.Client
	cl.Namespace("ordered")
	pods := client.Resource[api.Pod](c).Namespace("ordered")
	if _, err := pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Finalizers: []string{"e2e.example.com/finalizer"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}); err != nil {
		t.Fatal(err)
	}
	cms := client.Resource[api.ConfigMap](c).Namespace("ordered")
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	nsClient := client.Resource[api.Namespace](c)
	if err := nsClient.Delete(ctx, "ordered", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "deletion conditions on the namespace", func() (bool, error) {
		ns, err := nsClient.Get(ctx, "ordered")
		if err != nil {
			return false, err
		}
		for _, cond := range ns.Status.Conditions {
			if cond.Type == api.NamespaceDeletionContentFailure {
				return true, nil
			}
		}
		return false, nil
	})
	time.Sleep(2 * time.Second) // a few namespace controller passes
	p, err := pods.Get(ctx, "p")
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("the pod is not being deleted: %+v, %v", p, err)
	}
	if _, err := cms.Get(ctx, "cm"); err != nil {
		t.Fatalf("the configmap went before the pod: %v", err)
	}
	p.Finalizers = nil
	if _, err := pods.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(60*time.Second, "namespace ordered gone", func() (bool, error) {
		_, err := nsClient.Get(ctx, "ordered")
		return apierrors.IsNotFound(err), nil
	})
}
