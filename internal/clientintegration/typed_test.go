package clientintegration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// TestTypedClient drives the typed client through every verb against one
// real apiserver; each subtest works in a namespace of its own.
func TestTypedClient(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, t *testing.T, c *client.Client, ns string)
	}{
		{"pods-selectors-and-paging", testPodSelectorsAndPaging},
		{"pods-status-and-patches", testPodStatusAndPatches},
		{"pods-binding", testPodBinding},
		{"configmaps-crud-and-conflict", testConfigMapCRUD},
		{"deployments-status-and-scale", testDeploymentScale},
		{"nodes-cluster-scoped", testNodes},
		{"errors", testErrors},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			ns := createNamespace(ctx, t, c, tc.name)
			tc.run(ctx, t, c, ns)
		})
	}
}

func names[T any, PT interface {
	*T
	api.Object
}](items []T) []string {
	var out []string
	for i := range items {
		out = append(out, PT(&items[i]).GetObjectMeta().Name)
	}
	sort.Strings(out)
	return out
}

func testPodSelectorsAndPaging(ctx context.Context, t *testing.T, c *client.Client, ns string) {
	pods := client.Resource[api.Pod](c).Namespace(ns)
	labels := []map[string]string{
		{"app": "web", "tier": "front"},
		{"app": "web", "tier": "back"},
		{"app": "db"},
		{"app": "cache", "tier": "back"},
		nil,
	}
	for i, l := range labels {
		p, err := pods.Create(ctx, newPod("", fmt.Sprintf("p%d", i), l))
		if err != nil {
			t.Fatalf("create p%d: %v", i, err)
		}
		if p.Namespace != ns || p.UID == "" || p.ResourceVersion == "" || p.CreationTimestamp.IsZero() {
			t.Fatalf("created pod lacks server fields: %+v", p.ObjectMeta)
		}
		if p.Status.Phase != api.PodPending {
			t.Errorf("created pod phase = %q, want Pending", p.Status.Phase)
		}
	}
	got, err := pods.Get(ctx, "p1")
	if err != nil || got.Labels["tier"] != "back" || got.Kind != "Pod" || got.APIVersion != "v1" {
		t.Fatalf("get p1 = %+v, %v", got, err)
	}

	for _, tc := range []struct {
		label, field string
		want         []string
	}{
		{"", "", []string{"p0", "p1", "p2", "p3", "p4"}},
		{"app=web", "", []string{"p0", "p1"}},
		{"app==web,tier=back", "", []string{"p1"}},
		{"app!=web", "", []string{"p2", "p3", "p4"}},
		{"app in (db,cache)", "", []string{"p2", "p3"}},
		{"app notin (web)", "", []string{"p2", "p3", "p4"}},
		{"tier", "", []string{"p0", "p1", "p3"}},
		{"!tier", "", []string{"p2", "p4"}},
		{"", "metadata.name=p3", []string{"p3"}},
		{"", "metadata.name!=p3", []string{"p0", "p1", "p2", "p4"}},
		{"", "metadata.namespace=" + ns, []string{"p0", "p1", "p2", "p3", "p4"}},
		{"", "status.phase=Pending", []string{"p0", "p1", "p2", "p3", "p4"}},
		{"", "spec.nodeName=", []string{"p0", "p1", "p2", "p3", "p4"}},
		{"", "spec.nodeName=node-a", nil},
		{"tier=back", "metadata.name!=p1", []string{"p3"}},
	} {
		l, err := pods.List(ctx, client.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field})
		if err != nil {
			t.Errorf("list %q %q: %v", tc.label, tc.field, err)
			continue
		}
		if g := names(l.Items); !slices.Equal(g, tc.want) {
			t.Errorf("list labels %q fields %q = %v, want %v", tc.label, tc.field, g, tc.want)
		}
		for _, it := range l.Items {
			if it.Kind != "Pod" || it.APIVersion != "v1" {
				t.Errorf("list item without type meta: %q %q", it.APIVersion, it.Kind)
			}
		}
	}
	if _, err := pods.List(ctx, client.ListOptions{FieldSelector: "spec.unknownField=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list with an unsupported field selector: %v, want BadRequest", err)
	}

	// Paging: limit 2 gives three pages, in key order, without duplicates,
	// all at the first page's resourceVersion.
	full, err := pods.List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var paged []string
	opts := client.ListOptions{Limit: 2}
	pages := 0
	var firstRV string
	for {
		l, err := pods.List(ctx, opts)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		if firstRV == "" {
			firstRV = l.ResourceVersion
		} else if l.ResourceVersion != firstRV {
			t.Errorf("page %d at resourceVersion %s, first page at %s", pages, l.ResourceVersion, firstRV)
		}
		if len(l.Items) > 2 {
			t.Fatalf("page of %d items with limit 2", len(l.Items))
		}
		for _, it := range l.Items {
			paged = append(paged, it.Name)
		}
		if l.Continue == "" {
			if l.RemainingItemCount != nil && *l.RemainingItemCount != 0 {
				t.Errorf("last page remainingItemCount = %d", *l.RemainingItemCount)
			}
			break
		}
		if l.RemainingItemCount == nil || *l.RemainingItemCount != int64(5-len(paged)) {
			t.Errorf("page %d remainingItemCount = %v, want %d", pages, l.RemainingItemCount, 5-len(paged))
		}
		opts.Continue = l.Continue
		// A write between pages does not show in later pages.
		if pages == 1 {
			if _, err := pods.Create(ctx, newPod("", "p9", nil)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var fullNames []string
	for _, it := range full.Items {
		fullNames = append(fullNames, it.Name)
	}
	if pages != 3 || !slices.Equal(paged, fullNames) {
		t.Fatalf("paged list = %v in %d pages, full list = %v", paged, pages, fullNames)
	}
	if _, err := pods.List(ctx, client.ListOptions{Limit: 2, Continue: "not-a-token"}); !apierrors.IsBadRequest(err) {
		t.Errorf("bad continue token: %v, want BadRequest", err)
	}

	// DeleteCollection removes what the selector matches and nothing else.
	if err := pods.DeleteCollection(ctx, nil, client.ListOptions{LabelSelector: "tier=back"}); err != nil {
		t.Fatalf("delete collection: %v", err)
	}
	l, err := pods.List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := names(l.Items); !slices.Equal(g, []string{"p0", "p2", "p4", "p9"}) {
		t.Fatalf("after delete collection tier=back: %v", g)
	}
}

func testPodStatusAndPatches(ctx context.Context, t *testing.T, c *client.Client, ns string) {
	pods := client.Resource[api.Pod](c).Namespace(ns)
	p := newPod("", "web", map[string]string{"app": "web"})
	p.Spec.Containers = append(p.Spec.Containers, api.Container{Name: "sidecar", Image: "envoy"})
	created, err := pods.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}

	// UpdateStatus changes the status only: a spec change in the same body
	// is ignored, as /status does in Kubernetes.
	st := api.DeepCopy(created)
	st.Status.Phase = api.PodRunning
	st.Status.PodIP = "10.0.0.7"
	st.Spec.Containers[0].Image = "ignored"
	updated, err := pods.UpdateStatus(ctx, st)
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if updated.Status.Phase != api.PodRunning || updated.Status.PodIP != "10.0.0.7" {
		t.Errorf("status after UpdateStatus = %+v", updated.Status)
	}
	if updated.Spec.Containers[0].Image != "busybox" {
		t.Errorf("UpdateStatus changed the spec: image %q", updated.Spec.Containers[0].Image)
	}
	if rvOf(t, updated.ResourceVersion) <= rvOf(t, created.ResourceVersion) {
		t.Errorf("resourceVersion did not grow: %s -> %s", created.ResourceVersion, updated.ResourceVersion)
	}
	// Update of the main resource does not change the status.
	up := api.DeepCopy(updated)
	up.Status.Phase = api.PodFailed
	up.Labels["touched"] = "yes"
	up2, err := pods.Update(ctx, up)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if up2.Status.Phase != api.PodRunning || up2.Labels["touched"] != "yes" {
		t.Errorf("after Update: phase %q labels %v", up2.Status.Phase, up2.Labels)
	}
	// A stale resourceVersion is a conflict.
	if _, err := pods.Update(ctx, up); !apierrors.IsConflict(err) {
		t.Errorf("update with stale resourceVersion %s: %v, want Conflict", up.ResourceVersion, err)
	}
	if _, err := pods.UpdateStatus(ctx, st); !apierrors.IsConflict(err) {
		t.Errorf("status update with stale resourceVersion: %v, want Conflict", err)
	}

	for _, tc := range []struct {
		name  string
		pt    client.PatchType
		patch string
		check func(*api.Pod) error
	}{
		{"merge", client.MergePatchType, `{"metadata":{"labels":{"merged":"1","touched":null}}}`, func(p *api.Pod) error {
			if p.Labels["merged"] != "1" || p.Labels["app"] != "web" {
				return fmt.Errorf("labels %v", p.Labels)
			}
			if _, ok := p.Labels["touched"]; ok {
				return fmt.Errorf("null did not remove the label: %v", p.Labels)
			}
			return nil
		}},
		// Strategic merge merges containers by name: the sidecar stays.
		{"strategic", client.StrategicMergePatchType, `{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}`, func(p *api.Pod) error {
			if len(p.Spec.Containers) != 2 || p.Spec.Containers[0].Image != "busybox:2" || p.Spec.Containers[1].Name != "sidecar" {
				return fmt.Errorf("containers %+v", p.Spec.Containers)
			}
			return nil
		}},
		{"json", client.JSONPatchType, `[{"op":"test","path":"/metadata/labels/app","value":"web"},{"op":"replace","path":"/metadata/labels/app","value":"web2"},{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}]`, func(p *api.Pod) error {
			if p.Labels["app"] != "web2" || p.Annotations["a"] != "b" {
				return fmt.Errorf("labels %v annotations %v", p.Labels, p.Annotations)
			}
			return nil
		}},
		{"status-merge", client.MergePatchType, `{"status":{"message":"patched"}}`, nil},
	} {
		var sub []string
		if tc.name == "status-merge" {
			sub = []string{"status"}
		}
		got, err := pods.Patch(ctx, "web", tc.pt, []byte(tc.patch), sub...)
		if err != nil {
			t.Errorf("%s patch: %v", tc.name, err)
			continue
		}
		if tc.check != nil {
			if err := tc.check(got); err != nil {
				t.Errorf("%s patch: %v", tc.name, err)
			}
		} else if got.Status.Message != "patched" || got.Status.Phase != api.PodRunning {
			t.Errorf("status patch: %+v", got.Status)
		}
	}
	// A failing JSON patch test is not applied.
	if _, err := pods.Patch(ctx, "web", client.JSONPatchType, []byte(`[{"op":"test","path":"/metadata/labels/app","value":"nope"}]`)); err == nil {
		t.Error("JSON patch with a failing test op succeeded")
	} else if !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) && !apierrors.IsBadRequest(err) {
		t.Errorf("failing JSON patch test: %v (reason %q)", err, apierrors.ReasonForError(err))
	}
	if _, err := pods.Patch(ctx, "web", client.MergePatchType, []byte(`{not json`)); !apierrors.IsBadRequest(err) {
		t.Errorf("malformed merge patch: %v, want BadRequest", err)
	}

	// An unscheduled pod is deleted at once.
	if err := pods.Delete(ctx, "web", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "web"); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func testPodBinding(ctx context.Context, t *testing.T, c *client.Client, ns string) {
	pods := client.Resource[api.Pod](c).Namespace(ns)
	if _, err := pods.Create(ctx, newPod("", "b", nil)); err != nil {
		t.Fatal(err)
	}
	b := &api.Binding{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: api.ObjectMeta{Name: "b"},
		Target:     api.ObjectReference{Kind: "Node", Name: "node-a"},
	}
	var st api.Status
	if err := pods.Subresource("b", "binding").Post(ctx, b, &st); err != nil {
		t.Fatalf("bind: %v", err)
	}
	if st.Status != api.StatusSuccess {
		t.Errorf("binding answered %+v, want a Success Status", st)
	}
	p, err := pods.Get(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "node-a" {
		t.Fatalf("nodeName after binding = %q", p.Spec.NodeName)
	}
	scheduled := false
	for _, cond := range p.Status.Conditions {
		if cond.Type == api.PodScheduled && cond.Status == api.ConditionTrue {
			scheduled = true
		}
	}
	if !scheduled {
		t.Errorf("bound pod has no PodScheduled=True condition: %+v", p.Status.Conditions)
	}
	l, err := pods.List(ctx, client.ListOptions{FieldSelector: "spec.nodeName=node-a"})
	if err != nil || !slices.Equal(names(l.Items), []string{"b"}) {
		t.Fatalf("list spec.nodeName=node-a = %v, %v", l, err)
	}
	// Binding an assigned pod again is a conflict.
	b.Target.Name = "node-b"
	if err := pods.Subresource("b", "binding").Post(ctx, b, nil); !apierrors.IsConflict(err) {
		t.Errorf("second binding: %v, want Conflict", err)
	}
	if err := pods.Subresource("missing", "binding").Post(ctx, &api.Binding{ObjectMeta: api.ObjectMeta{Name: "missing"},
		Target: api.ObjectReference{Kind: "Node", Name: "node-a"}}, nil); !apierrors.IsNotFound(err) {
		t.Errorf("binding a missing pod: %v, want NotFound", err)
	}

	// A bound pod is deleted gracefully: it stays with a deletionTimestamp
	// until a delete with grace period 0.
	if err := pods.Delete(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	p, err = pods.Get(ctx, "b")
	if err != nil || p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("bound pod after graceful delete: %+v, %v", p, err)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "b", &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "b"); !apierrors.IsNotFound(err) {
		t.Fatalf("after final delete: %v", err)
	}
}

func testConfigMapCRUD(ctx context.Context, t *testing.T, c *client.Client, ns string) {
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)
	created, err := cms.Create(ctx, newConfigMap("", "cfg", map[string]string{"a": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	// Two writers read the same version; the second to write loses.
	w1, w2 := api.DeepCopy(created), api.DeepCopy(created)
	w1.Data["a"] = "2"
	after1, err := cms.Update(ctx, w1)
	if err != nil {
		t.Fatalf("first writer: %v", err)
	}
	w2.Data["a"] = "3"
	_, err = cms.Update(ctx, w2)
	if !apierrors.IsConflict(err) {
		t.Fatalf("second writer with resourceVersion %s: %v, want Conflict", w2.ResourceVersion, err)
	}
	if !strings.Contains(err.Error(), apierrors.OptimisticLockErrorMsg) {
		t.Errorf("conflict message %q lacks %q", err, apierrors.OptimisticLockErrorMsg)
	}
	got, err := cms.Get(ctx, "cfg")
	if err != nil || got.Data["a"] != "2" || got.ResourceVersion != after1.ResourceVersion {
		t.Fatalf("after conflict: %+v, %v", got, err)
	}
	// Unconditional update: an empty resourceVersion is no precondition
	// (Kubernetes allows it for configmaps).
	w2.ResourceVersion = ""
	if got, err := cms.Update(ctx, w2); err != nil || got.Data["a"] != "3" {
		t.Errorf("unconditional update: %+v, %v", got, err)
	}
	// Updating a missing object is NotFound, not a create.
	if _, err := cms.Update(ctx, newConfigMap("", "ghost", nil)); !apierrors.IsNotFound(err) {
		t.Errorf("update of a missing configmap: %v, want NotFound", err)
	}
	// Patches of each type.
	if p, err := cms.Patch(ctx, "cfg", client.MergePatchType, []byte(`{"data":{"b":"x"}}`)); err != nil || p.Data["b"] != "x" || p.Data["a"] != "3" {
		t.Errorf("merge patch: %+v, %v", p, err)
	}
	if p, err := cms.Patch(ctx, "cfg", client.StrategicMergePatchType, []byte(`{"data":{"a":null}}`)); err != nil || len(p.Data) != 1 || p.Data["b"] != "x" {
		t.Errorf("strategic patch: %+v, %v", p, err)
	}
	if p, err := cms.Patch(ctx, "cfg", client.JSONPatchType, []byte(`[{"op":"add","path":"/data/c","value":"y"}]`)); err != nil || p.Data["c"] != "y" {
		t.Errorf("json patch: %+v, %v", p, err)
	}
	if _, err := cms.Patch(ctx, "ghost", client.MergePatchType, []byte(`{}`)); !apierrors.IsNotFound(err) {
		t.Errorf("patch of a missing configmap: %v, want NotFound", err)
	}
	// Delete with a stale UID precondition is a conflict; without, it goes.
	wrong := api.UID("00000000-0000-0000-0000-000000000000")
	if err := cms.Delete(ctx, "cfg", &api.DeleteOptions{Preconditions: &api.Preconditions{UID: &wrong}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong UID precondition: %v, want Conflict", err)
	}
	if err := cms.Delete(ctx, "cfg", nil); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cfg", nil); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: %v, want NotFound", err)
	}

	for i := range 4 {
		cm := newConfigMap("", fmt.Sprintf("bulk-%d", i), nil)
		cm.Labels = map[string]string{"set": fmt.Sprint(i % 2)}
		if _, err := cms.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	if err := cms.DeleteCollection(ctx, nil, client.ListOptions{LabelSelector: "set=0"}); err != nil {
		t.Fatal(err)
	}
	l, err := cms.List(ctx, client.ListOptions{})
	if err != nil || !slices.Equal(names(l.Items), []string{"bulk-1", "bulk-3"}) {
		t.Fatalf("after delete collection set=0: %v, %v", l, err)
	}
	if err := cms.DeleteCollection(ctx, nil, client.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, err := cms.List(ctx, client.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("after delete collection of all: %v, %v", l, err)
	}
}

func testDeploymentScale(ctx context.Context, t *testing.T, c *client.Client, ns string) {
	deps := client.Resource[api.Deployment](c).Namespace(ns)
	d, err := deps.Create(ctx, newDeployment("", "web", 2))
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 || d.APIVersion != "apps/v1" || d.Kind != "Deployment" {
		t.Fatalf("created deployment: generation %d, %s %s", d.Generation, d.APIVersion, d.Kind)
	}
	// Defaults are applied.
	if d.Spec.Strategy.Type != api.RollingUpdateDeploymentStrategyType || d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("defaults not applied: strategy %+v revisionHistoryLimit %v", d.Spec.Strategy, d.Spec.RevisionHistoryLimit)
	}

	// Status through /status does not bump the generation.
	st := api.DeepCopy(d)
	st.Status.ObservedGeneration = 1
	st.Status.Replicas = 2
	d2, err := deps.UpdateStatus(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Generation != 1 || d2.Status.Replicas != 2 || d2.Status.ObservedGeneration != 1 {
		t.Errorf("after status update: generation %d status %+v", d2.Generation, d2.Status)
	}

	// GET /scale.
	var sc api.Scale
	if err := deps.Subresource("web", "scale").Get(ctx, &sc); err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if sc.Kind != "Scale" || sc.APIVersion != api.ScaleAPIVersion || sc.Spec.Replicas != 2 || sc.Status.Replicas != 2 || sc.Status.Selector != "app=web" || sc.Name != "web" {
		t.Fatalf("scale = %+v", sc)
	}
	// PUT /scale changes spec.replicas and the generation.
	sc.Spec.Replicas = 5
	var out api.Scale
	if err := deps.Subresource("web", "scale").Put(ctx, &sc, &out); err != nil {
		t.Fatalf("put scale: %v", err)
	}
	if out.Spec.Replicas != 5 {
		t.Errorf("put scale answered %+v", out)
	}
	d3, err := deps.Get(ctx, "web")
	if err != nil || *d3.Spec.Replicas != 5 || d3.Generation != 2 {
		t.Fatalf("deployment after scale: replicas %v generation %d, %v", d3.Spec.Replicas, d3.Generation, err)
	}
	// A stale scale is a conflict.
	sc.Spec.Replicas = 7
	if err := deps.Subresource("web", "scale").Put(ctx, &sc, nil); !apierrors.IsConflict(err) {
		t.Errorf("put scale with stale resourceVersion %s: %v, want Conflict", sc.ResourceVersion, err)
	}
	// A merge patch of /scale answers a Scale.
	var patched api.Scale
	if err := deps.Subresource("web", "scale").Patch(ctx, client.MergePatchType, []byte(`{"spec":{"replicas":3}}`), &patched); err != nil {
		t.Fatalf("patch scale: %v", err)
	}
	if patched.Kind != "Scale" || patched.Spec.Replicas != 3 || patched.Status.Selector != "app=web" {
		t.Errorf("patch of /scale answered %+v", patched)
	}
	if d4, err := deps.Get(ctx, "web"); err != nil || *d4.Spec.Replicas != 3 {
		t.Fatalf("deployment after scale patch: %+v, %v", d4, err)
	}
	// The dynamic client patches /scale as well.
	u, err := c.Dynamic(deps.Info()).Namespace(ns).Patch(ctx, "web", client.MergePatchType, []byte(`{"spec":{"replicas":4}}`), "scale")
	if err != nil || u.GetKind() != "Scale" {
		t.Fatalf("dynamic patch of /scale: %v, %v", u, err)
	}
	// A negative replica count is invalid.
	sc.Spec.Replicas = -1
	sc.ResourceVersion = ""
	if err := deps.Subresource("web", "scale").Put(ctx, &sc, nil); !apierrors.IsInvalid(err) {
		t.Errorf("scale to -1: %v, want Invalid", err)
	}
	if err := deps.Subresource("nope", "scale").Get(ctx, &sc); !apierrors.IsNotFound(err) {
		t.Errorf("scale of a missing deployment: %v, want NotFound", err)
	}
	if d5, err := deps.Get(ctx, "web"); err != nil || *d5.Spec.Replicas != 4 {
		t.Fatalf("deployment after dynamic scale patch: %+v, %v", d5, err)
	}
	if err := deps.Delete(ctx, "web", nil); err != nil {
		t.Fatal(err)
	}
}

func testNodes(ctx context.Context, t *testing.T, c *client.Client, _ string) {
	// Nodes are cluster-scoped: the client's namespace is ignored.
	nodes := client.Resource[api.Node](c).Namespace("ignored")
	prefix := "typed-node-"
	for i := range 3 {
		n := &api.Node{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("%s%d", prefix, i), Labels: map[string]string{"zone": fmt.Sprint(i % 2)}}}
		got, err := nodes.Create(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if got.Namespace != "" {
			t.Errorf("node has namespace %q", got.Namespace)
		}
	}
	n, err := nodes.Get(ctx, prefix+"1")
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady"}}
	n.Status.Capacity = api.ResourceList{}
	n2, err := nodes.UpdateStatus(ctx, n)
	if err != nil {
		t.Fatalf("node status: %v", err)
	}
	if len(n2.Status.Conditions) != 1 || n2.Status.Conditions[0].Type != api.NodeReady {
		t.Errorf("node conditions = %+v", n2.Status.Conditions)
	}
	if p, err := nodes.Patch(ctx, prefix+"1", client.StrategicMergePatchType, []byte(`{"spec":{"unschedulable":true}}`)); err != nil || !p.Spec.Unschedulable {
		t.Errorf("cordon by patch: %+v, %v", p, err)
	}
	l, err := nodes.List(ctx, client.ListOptions{LabelSelector: "zone=1"})
	if err != nil {
		t.Fatal(err)
	}
	if g := names(l.Items); !slices.Equal(g, []string{prefix + "1"}) {
		t.Errorf("nodes in zone 1 = %v", g)
	}
	if err := nodes.Delete(ctx, prefix+"0", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Get(ctx, prefix+"0"); !apierrors.IsNotFound(err) {
		t.Errorf("deleted node: %v", err)
	}
	if err := nodes.DeleteCollection(ctx, nil, client.ListOptions{LabelSelector: "zone"}); err != nil {
		t.Fatal(err)
	}
	l, err = nodes.List(ctx, client.ListOptions{LabelSelector: "zone"})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("nodes left: %v, %v", l, err)
	}
}

func statusOf(t *testing.T, err error) api.Status {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a StatusError", err, err)
	}
	return se.ErrStatus
}

func testErrors(ctx context.Context, t *testing.T, c *client.Client, ns string) {
	pods := client.Resource[api.Pod](c).Namespace(ns)
	_, err := pods.Get(ctx, "missing")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	if st := statusOf(t, err); st.Message != `pods "missing" not found` || st.Code != 404 || st.Details == nil || st.Details.Name != "missing" || st.Details.Kind != "pods" {
		t.Errorf("NotFound status = %+v", st)
	}
	if _, err := client.Resource[api.Deployment](c).Namespace(ns).Get(ctx, "missing"); !apierrors.IsNotFound(err) || err.Error() != `deployments.apps "missing" not found` {
		t.Errorf("missing deployment: %v", err)
	}

	if _, err := pods.Create(ctx, newPod("", "dup", nil)); err != nil {
		t.Fatal(err)
	}
	_, err = pods.Create(ctx, newPod("", "dup", nil))
	if !apierrors.IsAlreadyExists(err) || err.Error() != `pods "dup" already exists` {
		t.Errorf("duplicate create: %v", err)
	}

	_, err = client.Resource[api.Pod](c).Namespace("no-such-namespace").Create(ctx, newPod("", "x", nil))
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "no-such-namespace" not found`) {
		t.Errorf("create in a missing namespace: %v", err)
	}

	bad := newPod("", "Bad_Name", nil)
	bad.Spec.Containers[0].Image = ""
	_, err = pods.Create(ctx, bad)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("invalid pod: %v, want Invalid", err)
	}
	st := statusOf(t, err)
	if st.Code != 422 || !strings.HasPrefix(st.Message, `Pod "Bad_Name" is invalid: `) {
		t.Errorf("Invalid status = %+v", st)
	}
	fields := map[string]bool{}
	if st.Details != nil {
		for _, cz := range st.Details.Causes {
			fields[cz.Field] = true
		}
	}
	if !fields["metadata.name"] || !fields["spec.containers[0].image"] {
		t.Errorf("Invalid causes = %+v, want metadata.name and spec.containers[0].image", st.Details)
	}
	if _, err := pods.Get(ctx, "Bad_Name"); !apierrors.IsNotFound(err) {
		t.Errorf("invalid pod was stored: %v", err)
	}
	// An update that changes an immutable field is invalid too.
	p, err := pods.Get(ctx, "dup")
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Containers = append(p.Spec.Containers, api.Container{Name: "extra", Image: "x"})
	if _, err := pods.Update(ctx, p); !apierrors.IsInvalid(err) {
		t.Errorf("adding a container to a pod: %v, want Invalid", err)
	}
}
