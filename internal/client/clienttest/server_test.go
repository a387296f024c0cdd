package clienttest_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
)

func pod(ns, name string, lbl map[string]string) *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: lbl}}
}

func actionStrings(as []clienttest.Action) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}

func TestCRUDAndActions(t *testing.T) {
	t.Parallel()
	srv := clienttest.NewServer(t, pod("default", "web-1", map[string]string{"app": "web"}))
	c := srv.Client()
	ctx := context.Background()
	pods := client.Resource[api.Pod](c).Namespace("default")

	got, err := pods.Get(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.UID == "" || got.ResourceVersion == "" || got.CreationTimestamp.IsZero() || got.Kind != "Pod" {
		t.Errorf("seeded object lacks server fields: %+v", got.ObjectMeta)
	}

	created, err := pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{GenerateName: "db-", Labels: map[string]string{"app": "db"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Name, "db-") || len(created.Name) != len("db-")+5 || created.Namespace != "default" {
		t.Errorf("generateName: %q in %q", created.Name, created.Namespace)
	}
	if _, err := pods.Create(ctx, pod("", "web-1", nil)); !apierrors.IsAlreadyExists(err) {
		t.Errorf("duplicate create: %v", err)
	}
	if _, err := pods.Create(ctx, pod("", "", nil)); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "metadata.name: Required value: name or generateName is required") {
		t.Errorf("create without name: %v", err)
	}

	list, err := pods.List(ctx, client.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "web-1" {
		t.Fatalf("list by label: %+v %v", list, err)
	}

	// Optimistic concurrency: a stale resourceVersion conflicts.
	stale := *got
	got.Spec.NodeName = "" // no change needed; update bumps the version
	got.Labels = map[string]string{"app": "web", "v": "2"}
	updated, err := pods.Update(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == stale.ResourceVersion {
		t.Error("update did not bump resourceVersion")
	}
	stale.Labels = map[string]string{"lost": "update"}
	if _, err := pods.Update(ctx, &stale); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v", err)
	}

	// The main resource ignores status; /status changes only status.
	updated.Status.Phase = "Running"
	afterMain, err := pods.Update(ctx, updated)
	if err != nil || afterMain.Status.Phase != "" {
		t.Errorf("main update changed status: %q %v", afterMain.Status.Phase, err)
	}
	afterMain.Status.Phase = "Running"
	afterMain.Labels = nil
	afterStatus, err := pods.UpdateStatus(ctx, afterMain)
	if err != nil || afterStatus.Status.Phase != "Running" || afterStatus.Labels["v"] != "2" {
		t.Errorf("status update: phase %q labels %v err %v", afterStatus.Status.Phase, afterStatus.Labels, err)
	}

	patched, err := pods.Patch(ctx, "web-1", client.MergePatchType, []byte(`{"metadata":{"labels":{"v":"3"}}}`))
	if err != nil || patched.Labels["v"] != "3" || patched.Labels["app"] != "web" {
		t.Errorf("merge patch: %v %v", patched.Labels, err)
	}
	patched, err = pods.Patch(ctx, "web-1", client.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/labels/v"}]`))
	if err != nil || len(patched.Labels) != 1 {
		t.Errorf("json patch: %v %v", patched.Labels, err)
	}

	if err := pods.Delete(ctx, created.Name, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, created.Name); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}

	want := []string{
		"get pods default/web-1",
		"create pods default",
		"create pods default",
		"create pods default",
		"list pods default",
		"update pods default/web-1",
		"update pods default/web-1",
		"update pods default/web-1",
		"update pods default/web-1/status",
		"patch pods default/web-1",
		"patch pods default/web-1",
		"delete pods default/" + created.Name,
		"get pods default/" + created.Name,
	}
	if got := actionStrings(srv.Actions()); !reflect.DeepEqual(got, want) {
		t.Errorf("actions\n got %q\nwant %q", got, want)
	}
	if a := srv.Actions()[9]; a.PatchType != string(client.MergePatchType) || !strings.Contains(string(a.Body), `"v":"3"`) {
		t.Errorf("patch action %+v", a)
	}
}

func TestBindingFinalizersAndReactors(t *testing.T) {
	t.Parallel()
	srv := clienttest.NewServer(t, pod("default", "p", nil))
	c := srv.Client()
	ctx := context.Background()
	pods := client.Resource[api.Pod](c).Namespace("default")

	bind := func() error {
		return pods.Subresource("p", "binding").Post(ctx, &api.Binding{
			ObjectMeta: api.ObjectMeta{Name: "p"}, Target: api.ObjectReference{Kind: "Node", Name: "n1"}}, nil)
	}
	if err := bind(); err != nil {
		t.Fatal(err)
	}
	var p api.Pod
	if !srv.Object(client.Resource[api.Pod](c).Info(), "default", "p", &p) || p.Spec.NodeName != "n1" {
		t.Errorf("binding did not set nodeName: %+v", p.Spec.NodeName)
	}
	if err := bind(); !apierrors.IsConflict(err) {
		t.Errorf("second binding: %v", err)
	}

	// A finalizer delays removal until it is gone.
	leases := client.Resource[api.Lease](c).Namespace("kube-system")
	if _, err := leases.Create(ctx, &api.Lease{ObjectMeta: api.ObjectMeta{Name: "l", Finalizers: []string{"example.com/hold"}}}); err != nil {
		t.Fatal(err)
	}
	if err := leases.Delete(ctx, "l", nil); err != nil {
		t.Fatal(err)
	}
	l, err := leases.Get(ctx, "l")
	if err != nil || l.DeletionTimestamp == nil {
		t.Fatalf("finalized object: %v %v", l, err)
	}
	l.Finalizers = nil
	if _, err := leases.Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Get(ctx, "l"); !apierrors.IsNotFound(err) {
		t.Errorf("object with no finalizers left not removed: %v", err)
	}

	// Preconditions.
	if _, err := leases.Create(ctx, &api.Lease{ObjectMeta: api.ObjectMeta{Name: "m"}}); err != nil {
		t.Fatal(err)
	}
	rv := "1"
	if err := leases.Delete(ctx, "m", &api.DeleteOptions{Preconditions: &api.Preconditions{ResourceVersion: &rv}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with stale precondition: %v", err)
	}

	// Reactors answer first.
	srv.PrependReactor("update", "leases", func(a clienttest.Action) (bool, any, error) {
		return true, nil, apierrors.NewServiceUnavailable("injected")
	})
	m, _ := leases.Get(ctx, "m")
	if _, err := leases.Update(ctx, m); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("reactor error not returned: %v", err)
	}
	srv.PrependReactor("get", "*", func(a clienttest.Action) (bool, any, error) {
		return a.Name == "ghost", &api.Lease{ObjectMeta: api.ObjectMeta{Name: "ghost"}}, nil
	})
	if g, err := leases.Get(ctx, "ghost"); err != nil || g.Name != "ghost" {
		t.Errorf("reactor answer: %v %v", g, err)
	}
}

func TestWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	srv := clienttest.NewServer(t, pod("default", "a", nil))
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods := client.Resource[api.Pod](c)

	// A kubelet-style watch: pods bound to n1, across namespaces.
	w, err := pods.Watch(ctx, client.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	bind := func(name, node string) {
		t.Helper()
		if err := pods.Namespace("default").Subresource(name, "binding").Post(ctx,
			map[string]any{"target": map[string]string{"name": node}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	bind("a", "n1")
	if _, err := pods.Namespace("default").Create(ctx, pod("", "b", nil)); err != nil {
		t.Fatal(err)
	}
	bind("b", "n2")
	if _, err := pods.Namespace("default").Patch(ctx, "a", client.MergePatchType, []byte(`{"spec":{"nodeName":"n9"}}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		select {
		case ev := <-w.ResultChan():
			got = append(got, ev.Type+" "+ev.Object.Name+" "+ev.Object.Spec.NodeName)
		case <-ctx.Done():
			t.Fatalf("events so far %v", got)
		}
	}
	if want := []string{"ADDED a n1", "DELETED a n9"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestWatchResumesFromResourceVersion(t *testing.T) {
	t.Parallel()
	srv := clienttest.NewServer(t)
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leases := client.Resource[api.Lease](c).Namespace("ns")
	for _, n := range []string{"a", "b", "c"} {
		if _, err := leases.Create(ctx, &api.Lease{ObjectMeta: api.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := leases.List(ctx, client.ListOptions{})
	if err != nil || len(l.Items) != 3 {
		t.Fatal(l, err)
	}
	afterA := l.Items[0].ResourceVersion
	w, err := leases.Watch(ctx, client.ListOptions{ResourceVersion: afterA})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, want := range []string{"b", "c"} {
		ev := <-w.ResultChan()
		if ev.Type != api.Added || ev.Object.Name != want {
			t.Fatalf("event %s %s, want ADDED %s", ev.Type, ev.Object.Name, want)
		}
	}
	if err := leases.Delete(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != api.Deleted || ev.Object.Name != "a" {
		t.Fatalf("event %s", ev.Type)
	}
	if n := len(srv.Actions()); n == 0 {
		t.Fatal(errors.New("no actions recorded"))
	}
}
