package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// deploymentApply is the apply configuration of a small Deployment.
func deploymentApply(ns, name string, replicas int32, image string) *appsv1ac.DeploymentApplyConfiguration {
	labels := map[string]string{"app": name}
	return appsv1ac.Deployment(name, ns).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("app").WithImage(image).
				WithPorts(corev1ac.ContainerPort().WithContainerPort(80))))))
}

// entry returns the managedFields entry of manager (and operation,
// subresource), or fails.
func entry(t *testing.T, mf []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType, sub string) metav1.ManagedFieldsEntry {
	t.Helper()
	for _, e := range mf {
		if e.Manager == manager && e.Operation == op && e.Subresource == sub {
			if e.FieldsType != "FieldsV1" || e.FieldsV1 == nil || e.Time == nil || e.APIVersion == "" {
				t.Errorf("entry of %s is incomplete: %+v", manager, e)
			}
			return e
		}
	}
	b, _ := json.Marshal(mf)
	t.Fatalf("no %s entry of %q (subresource %q) in %s", op, manager, sub, b)
	return metav1.ManagedFieldsEntry{}
}

func owns(e metav1.ManagedFieldsEntry, field string) bool {
	return e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), field)
}

// TestServerSideApplyClientGo drives server-side apply with client-go's
// typed clientset at its default settings (protobuf for built-in kinds,
// the apply body as YAML): create by apply, Update operations recorded in
// managedFields, a conflict between two managers with its causes, force,
// the status subresource's entry, a dry run, and a no-op re-apply.
func TestServerSideApplyClientGo(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	rec := &wireRecorder{}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 100, Burst: 200, WrapTransport: rec.wrap,
		UserAgent: "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abcdef/system:serviceaccount:kube-system:deployment-controller"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "ssa"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deploys := cs.AppsV1().Deployments(ns)

	// Create by apply: 201, one Apply entry.
	d, err := deploys.Apply(ctx, deploymentApply(ns, "web", 3, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply (create): %v", err)
	}
	last := rec.all()[len(rec.all())-1]
	if last.method != http.MethodPatch || last.code != http.StatusCreated || last.requestType != "application/apply-patch+yaml" || last.answerType != protobufType {
		t.Errorf("apply (create) on the wire: %+v", last)
	}
	if *d.Spec.Replicas != 3 || d.Spec.Template.Spec.Containers[0].Ports[0].Protocol != corev1.ProtocolTCP || d.UID == "" {
		t.Errorf("created by apply: %+v", d.Spec)
	}
	if len(d.ManagedFields) != 1 {
		t.Errorf("managedFields after create by apply: %+v", d.ManagedFields)
	}
	alice := entry(t, d.ManagedFields, "alice", metav1.ManagedFieldsOperationApply, "")
	if alice.APIVersion != "apps/v1" || !owns(alice, `"f:replicas":{}`) || !owns(alice, `"k:{\"containerPort\":80,\"protocol\":\"TCP\"}"`) {
		t.Errorf("alice's entry: %s", alice.FieldsV1.Raw)
	}

	// Re-applying the same configuration changes nothing.
	again, err := deploys.Apply(ctx, deploymentApply(ns, "web", 3, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != d.ResourceVersion {
		t.Errorf("a no-op apply wrote: rv %s -> %s", d.ResourceVersion, again.ResourceVersion)
	}

	// An update, with the manager named after the User-Agent: an Update entry.
	d.Spec.Replicas = ptr.To[int32](5)
	d, err = deploys.Update(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	kcm := entry(t, d.ManagedFields, "kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "")
	if !owns(kcm, `"f:replicas":{}`) || kcm.APIVersion != "apps/v1" {
		t.Errorf("updater's entry: %s", kcm.FieldsV1.Raw)
	}
	if a := entry(t, d.ManagedFields, "alice", metav1.ManagedFieldsOperationApply, ""); owns(a, "f:replicas") {
		t.Errorf("alice still owns replicas after the update: %s", a.FieldsV1.Raw)
	}

	// alice applies her replicas again: a conflict, worded as Kubernetes does.
	_, err = deploys.Apply(ctx, deploymentApply(ns, "web", 3, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply over another manager's field: %v", err)
	}
	var st *apierrors.StatusError
	if !errorsAs(err, &st) {
		t.Fatalf("not a Status: %v", err)
	}
	wantMsg := `Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: .spec.replicas`
	if st.ErrStatus.Message != wantMsg || st.ErrStatus.Code != http.StatusConflict || st.ErrStatus.Reason != metav1.StatusReasonConflict {
		t.Errorf("conflict status: %+v", st.ErrStatus)
	}
	if det := st.ErrStatus.Details; det == nil || len(det.Causes) != 1 || det.Causes[0].Type != metav1.CauseTypeFieldManagerConflict ||
		det.Causes[0].Field != ".spec.replicas" || det.Causes[0].Message != `conflict with "kube-controller-manager" using apps/v1` {
		t.Errorf("conflict causes: %+v", st.ErrStatus.Details)
	}
	if cur, _ := deploys.Get(ctx, "web", metav1.GetOptions{}); *cur.Spec.Replicas != 5 || cur.ResourceVersion != d.ResourceVersion {
		t.Errorf("a conflicting apply changed the object")
	}

	// Two conflicting fields from two managers.
	d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if d, err = deploys.Update(ctx, d, metav1.UpdateOptions{FieldManager: "bob"}); err != nil {
		t.Fatal(err)
	}
	_, err = deploys.Apply(ctx, deploymentApply(ns, "web", 3, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice"})
	if !errorsAs(err, &st) || len(st.ErrStatus.Details.Causes) != 2 ||
		!strings.HasPrefix(st.ErrStatus.Message, "Apply failed with 2 conflicts: conflicts with \"bob\" using apps/v1:\n- .spec.template.spec.containers[name=\"app\"].image\nconflicts with \"kube-controller-manager\" using apps/v1:\n- .spec.replicas") {
		t.Errorf("two conflicts: %v", err)
	}

	// Forced, alice takes both back.
	d, err = deploys.Apply(ctx, deploymentApply(ns, "web", 3, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice", Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if *d.Spec.Replicas != 3 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Errorf("forced apply: %+v", d.Spec)
	}
	for _, e := range d.ManagedFields {
		if e.Manager != "alice" && (owns(e, "f:replicas") || owns(e, "f:image")) {
			t.Errorf("%s still owns alice's fields: %s", e.Manager, e.FieldsV1.Raw)
		}
	}

	// A status write: its own entry, with subresource status.
	d.Status.Replicas, d.Status.ObservedGeneration = 3, d.Generation
	d, err = deploys.UpdateStatus(ctx, d, metav1.UpdateOptions{FieldManager: "status-writer"})
	if err != nil {
		t.Fatal(err)
	}
	sw := entry(t, d.ManagedFields, "status-writer", metav1.ManagedFieldsOperationUpdate, "status")
	if !owns(sw, `"f:status"`) || owns(sw, `"f:spec"`) {
		t.Errorf("status entry: %s", sw.FieldsV1.Raw)
	}

	// An apply through /status: an Apply entry with subresource status.
	st2 := appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(3).WithReadyReplicas(1))
	d, err = deploys.ApplyStatus(ctx, st2, metav1.ApplyOptions{FieldManager: "status-applier", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	if d.Status.ReadyReplicas != 1 || *d.Spec.Replicas != 3 {
		t.Errorf("after apply status: spec %d status %+v", *d.Spec.Replicas, d.Status)
	}
	if e := entry(t, d.ManagedFields, "status-applier", metav1.ManagedFieldsOperationApply, "status"); !owns(e, `"f:readyReplicas"`) {
		t.Errorf("status apply entry: %s", e.FieldsV1.Raw)
	}

	// Scale: an Update through subresource scale, owning the replicas.
	sc, err := deploys.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec.Replicas = 4
	if _, err := deploys.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{FieldManager: "scaler"}); err != nil {
		t.Fatal(err)
	}
	d, _ = deploys.Get(ctx, "web", metav1.GetOptions{})
	if e := entry(t, d.ManagedFields, "scaler", metav1.ManagedFieldsOperationUpdate, "scale"); !owns(e, `"f:replicas"`) {
		t.Errorf("scale entry: %s", e.FieldsV1.Raw)
	}

	// A dry-run apply answers the result and stores nothing.
	dry, err := deploys.Apply(ctx, deploymentApply(ns, "web", 7, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice", Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil || *dry.Spec.Replicas != 7 {
		t.Fatalf("dry-run apply: %v", err)
	}
	if cur, _ := deploys.Get(ctx, "web", metav1.GetOptions{}); *cur.Spec.Replicas != 4 || cur.ResourceVersion != d.ResourceVersion {
		t.Errorf("a dry-run apply was stored")
	}
	if _, err := deploys.Apply(ctx, deploymentApply(ns, "dry", 1, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice", DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := deploys.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry-run create by apply was stored: %v", err)
	}

	// A client may reset managedFields with an empty entry: none are left,
	// and updates of an object without any are not tracked (until an apply).
	d.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	d.Labels = map[string]string{"reset": "yes"}
	if d, err = deploys.Update(ctx, d, metav1.UpdateOptions{FieldManager: "resetter"}); err != nil {
		t.Fatal(err)
	}
	if len(d.ManagedFields) != 0 {
		b, _ := json.Marshal(d.ManagedFields)
		t.Errorf("after a reset: %s", b)
	}
	// Sending none keeps what is recorded.
	d, err = deploys.Apply(ctx, appsv1ac.Deployment("web", ns).WithLabels(map[string]string{"by": "alice"}), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	d.ManagedFields = nil
	d.Labels["other"] = "x"
	if d, err = deploys.Update(ctx, d, metav1.UpdateOptions{FieldManager: "keeper"}); err != nil {
		t.Fatal(err)
	}
	entry(t, d.ManagedFields, "alice", metav1.ManagedFieldsOperationApply, "")
	entry(t, d.ManagedFields, "keeper", metav1.ManagedFieldsOperationUpdate, "")

	// Plain creates are recorded too.
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	if e := entry(t, cm.ManagedFields, "creator", metav1.ManagedFieldsOperationUpdate, ""); string(e.FieldsV1.Raw) != `{"f:data":{".":{},"f:a":{}}}` || e.APIVersion != "v1" {
		t.Errorf("create entry: %s", e.FieldsV1.Raw)
	}
}

func errorsAs(err error, st **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	if ok {
		*st = s
	}
	return ok
}

// TestServerSideApplyDynamic applies with client-go's dynamic client
// (JSON), takes over fields from client-side apply's last-applied
// annotation (kubectl's migration), and checks the errors of bad apply
// requests and that they store nothing.
func TestServerSideApplyDynamic(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cfg := &rest.Config{Host: s.URL(), QPS: 100, Burst: 200}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "default"
	cms := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)

	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "dyn"},
		"data":     map[string]any{"a": "1", "b": "2"},
	}}
	got, err := cms.Apply(ctx, "dyn", cm, metav1.ApplyOptions{FieldManager: "dyn-manager"})
	if err != nil {
		t.Fatalf("dynamic apply: %v", err)
	}
	e := entry(t, got.GetManagedFields(), "dyn-manager", metav1.ManagedFieldsOperationApply, "")
	if string(e.FieldsV1.Raw) != `{"f:data":{"f:a":{},"f:b":{}}}` {
		t.Errorf("dynamic apply entry: %s", e.FieldsV1.Raw)
	}
	// Dropping a field from the configuration removes it.
	delete(cm.Object["data"].(map[string]any), "b")
	if got, err = cms.Apply(ctx, "dyn", cm, metav1.ApplyOptions{FieldManager: "dyn-manager"}); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := unstructured.NestedStringMap(got.Object, "data"); len(data) != 1 || data["a"] != "1" {
		t.Errorf("data after dropping b from the configuration: %v", data)
	}

	// Client-side apply's objects move to server-side apply without conflicts.
	lastApplied := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"csa","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"csa"}},"template":{"metadata":{"labels":{"app":"csa"}},"spec":{"containers":[{"image":"nginx:1","name":"app"}]}}}}`
	var csa appsv1.Deployment
	if err := json.Unmarshal([]byte(lastApplied), &csa); err != nil {
		t.Fatal(err)
	}
	csa.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &csa, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	ac := deploymentApply(ns, "csa", 4, "nginx:2")
	ac.Spec.Template.Spec.Containers[0].Ports = nil
	d, err := cs.AppsV1().Deployments(ns).Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "kubectl"})
	if err != nil {
		t.Fatalf("server-side apply over client-side apply: %v", err)
	}
	if *d.Spec.Replicas != 4 || d.Spec.Template.Spec.Containers[0].Image != "nginx:2" {
		t.Errorf("after migration: %+v", d.Spec)
	}
	la := d.Annotations["kubectl.kubernetes.io/last-applied-configuration"]
	if !strings.Contains(la, `"replicas":4`) || !strings.Contains(la, `"image":"nginx:2"`) {
		t.Errorf("last-applied annotation not updated: %s", la)
	}
	if e := entry(t, d.ManagedFields, "kubectl", metav1.ManagedFieldsOperationApply, ""); !owns(e, "f:replicas") {
		t.Errorf("kubectl's entry: %s", e.FieldsV1.Raw)
	}

	// Bad requests: Kubernetes' codes and messages; nothing stored.
	base := s.URL() + "/apis/apps/v1/namespaces/default/deployments/bad"
	good := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bad"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	for _, tc := range []struct {
		name, query, ctype, body string
		code                     int
		reason, msg              string
	}{
		{"no field manager", "", "application/apply-patch+yaml", good, 422, "Invalid",
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"force on a merge patch", "?force=true", "application/merge-patch+json", `{}`, 422, "Invalid",
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{"not yaml", "?fieldManager=m", "application/apply-patch+yaml", "kind: [", 400, "BadRequest", "error decoding patch: "},
		{"wrong kind", "?fieldManager=m", "application/apply-patch+yaml", strings.Replace(good, `"Deployment"`, `"ReplicaSet"`, 1), 400, "BadRequest",
			"invalid object type: apps/v1, Kind=ReplicaSet"},
		{"wrong name", "?fieldManager=m", "application/apply-patch+yaml", strings.Replace(good, `"name":"bad"`, `"name":"other"`, 1), 400, "BadRequest",
			"the name of the object (other) does not match the name on the URL (bad)"},
		{"unknown field", "?fieldManager=m", "application/apply-patch+yaml", strings.Replace(good, `"spec":{`, `"spec":{"bogus":1,`, 1), 500, "",
			"failed to create typed patch object (/bad; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema"},
		{"invalid", "?fieldManager=m", "application/apply-patch+yaml", strings.Replace(good, `"name":"c"`, `"name":"C_"`, 1), 422, "Invalid",
			`Deployment.apps "bad" is invalid`},
		{"cbor", "?fieldManager=m", "application/apply-patch+cbor", good, 415, "UnsupportedMediaType", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, base+tc.query, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if resp.StatusCode != tc.code || int(st.Code) != tc.code || string(st.Reason) != tc.reason || !strings.HasPrefix(st.Message, tc.msg) || st.Kind != "Status" {
				t.Errorf("got %d %s", resp.StatusCode, body)
			}
		})
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a failed apply stored the object: %v", err)
	}

	// An apply to an existing object that the strategy rejects stores nothing.
	before, _ := cs.AppsV1().Deployments(ns).Get(ctx, "csa", metav1.GetOptions{})
	_, err = cs.AppsV1().Deployments(ns).Patch(ctx, "csa", types.ApplyPatchType,
		[]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"csa"},"spec":{"replicas":-1}}`),
		metav1.PatchOptions{FieldManager: "kubectl", Force: ptr.To(true)})
	if !apierrors.IsInvalid(err) {
		t.Errorf("negative replicas by apply: %v", err)
	}
	if after, _ := cs.AppsV1().Deployments(ns).Get(ctx, "csa", metav1.GetOptions{}); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("an invalid apply was stored")
	}
}

// TestServerSideApplyCreateNeedsCreate checks that an apply that would
// create its object is authorized as a create as well, as kube-apiserver
// does: a user who may only patch gets 403 and nothing is stored, while
// applying to an existing object works.
func TestServerSideApplyCreateNeedsCreate(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", map[string]any{
		"metadata": map[string]any{"name": "cm-patcher"},
		"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"configmaps"}, "verbs": []string{"get", "patch"}}},
	})
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "carol-patches"},
		"subjects": []any{map[string]any{"kind": "User", "name": "carol"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-patcher"},
	})
	admin.must(201, "POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "there"}})
	carol := userClient(t, s, "carol")
	base := s.SecureURL() + "/api/v1/namespaces/default/configmaps/"
	apply := func(name string) int {
		return send(t, carol, "PATCH", base+name+"?fieldManager=carol",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"},"data":{"k":"v"}}`, "application/apply-patch+yaml")
	}
	waitFor(t, 5*time.Second, func() bool { return apply("there") == 200 })
	if got := apply("missing"); got != http.StatusForbidden {
		t.Errorf("apply creating without create permission = %d, want 403", got)
	}
	admin.must(404, "GET", "/api/v1/namespaces/default/configmaps/missing", nil)
}
