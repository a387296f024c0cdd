package fieldmanager_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/fieldmanager"
	"github.com/minik8s/minik8s/apiserver/openapi"
)

var (
	mgrOnce sync.Once
	mgr     *fieldmanager.Manager
	mgrErr  error
)

// manager builds the Manager from the documents the apiserver publishes.
func manager(t testing.TB) *fieldmanager.Manager {
	t.Helper()
	mgrOnce.Do(func() {
		docs, err := openapi.New(api.Resources)
		if err != nil {
			mgrErr = err
			return
		}
		mgr, mgrErr = fieldmanager.New(docs.Schemas())
	})
	if mgrErr != nil {
		t.Fatal(mgrErr)
	}
	return mgr
}

func kind(t testing.TB, k string) *fieldmanager.Kind {
	for _, ri := range api.Resources {
		if ri.Kind == k {
			return manager(t).For(ri)
		}
	}
	t.Fatalf("no kind %s", k)
	return nil
}

const deployYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
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
        image: nginx
        ports:
        - containerPort: 80
`

func fields(t *testing.T, e api.ManagedFieldsEntry) string {
	t.Helper()
	if e.FieldsV1 == nil {
		t.Fatalf("entry %+v has no fieldsV1", e)
	}
	return string(e.FieldsV1.Raw)
}

func TestApplyThenConflict(t *testing.T) {
	t.Parallel()
	k := kind(t, "Deployment")
	obj, err := k.Apply(nil, []byte(deployYAML), "alice", "", false)
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*api.Deployment)
	if d.Name != "web" || d.Spec.Replicas == nil || *d.Spec.Replicas != 3 || d.Spec.Template.Spec.Containers[0].Image != "nginx" {
		t.Fatalf("applied object: %+v", d)
	}
	if len(d.ManagedFields) != 1 {
		t.Fatalf("managedFields: %+v", d.ManagedFields)
	}
	e := d.ManagedFields[0]
	if e.Manager != "alice" || e.Operation != api.ManagedFieldsOperationApply || e.APIVersion != "apps/v1" || e.FieldsType != "FieldsV1" || e.Time == nil {
		t.Errorf("entry: %+v", e)
	}
	if f := fields(t, e); !strings.Contains(f, `"f:replicas":{}`) || !strings.Contains(f, `"k:{\"name\":\"app\"}"`) ||
		!strings.Contains(f, `"k:{\"containerPort\":80,\"protocol\":\"TCP\"}"`) {
		t.Errorf("fieldsV1: %s", f)
	}

	// bob changes the replicas with an update: he now owns them.
	upd := api.DeepCopyObject(d).(*api.Deployment)
	r := int32(5)
	upd.Spec.Replicas = &r
	k.Update(d, upd, "bob", "")
	if len(upd.ManagedFields) != 2 || upd.ManagedFields[1].Manager != "bob" || upd.ManagedFields[1].Operation != api.ManagedFieldsOperationUpdate {
		t.Fatalf("after update: %+v", upd.ManagedFields)
	}

	// alice applies her replicas again: a conflict with bob.
	_, err = k.Apply(upd, []byte(deployYAML), "alice", "", false)
	se, ok := err.(*apierrors.StatusError)
	if !ok || se.ErrStatus.Code != 409 || se.ErrStatus.Reason != api.StatusReasonConflict {
		t.Fatalf("apply over bob's replicas: %v", err)
	}
	want := `Apply failed with 1 conflict: conflict with "bob" using apps/v1: .spec.replicas`
	if se.ErrStatus.Message != want {
		t.Errorf("message %q, want %q", se.ErrStatus.Message, want)
	}
	if se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 ||
		se.ErrStatus.Details.Causes[0].Field != ".spec.replicas" || se.ErrStatus.Details.Causes[0].Type != "FieldManagerConflict" ||
		se.ErrStatus.Details.Causes[0].Message != `conflict with "bob" using apps/v1` {
		b, _ := json.Marshal(se.ErrStatus)
		t.Errorf("status: %s", b)
	}

	// With force, alice takes the field back.
	obj, err = k.Apply(upd, []byte(deployYAML), "alice", "", true)
	if err != nil {
		t.Fatal(err)
	}
	d = obj.(*api.Deployment)
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas %d after a forced apply", *d.Spec.Replicas)
	}
	for _, e := range d.ManagedFields {
		if e.Manager == "bob" && strings.Contains(fields(t, e), "replicas") {
			t.Errorf("bob still owns replicas: %s", fields(t, e))
		}
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	k := kind(t, "Deployment")
	for _, tc := range []struct {
		name, body string
		code       int32
		msg        string
	}{
		{"not yaml", "apiVersion: apps/v1\nkind: [", 400, "error decoding patch: "},
		{"wrong version", strings.Replace(deployYAML, "apps/v1", "apps/v1beta1", 1), 400,
			"invalid object type: apps/v1beta1, Kind=Deployment"},
		{"wrong kind", strings.Replace(deployYAML, "kind: Deployment", "kind: ReplicaSet", 1), 400,
			"invalid object type: apps/v1, Kind=ReplicaSet"},
		{"managedFields", strings.Replace(deployYAML, "  namespace: default\n", "  namespace: default\n  managedFields: [{manager: x}]\n", 1), 400,
			"metadata.managedFields must be nil"},
		{"unknown field", strings.Replace(deployYAML, "  replicas: 3\n", "  replicas: 3\n  bogus: 1\n", 1), 500,
			"failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.Apply(nil, []byte(tc.body), "alice", "", false)
			se, ok := err.(*apierrors.StatusError)
			if !ok || se.ErrStatus.Code != tc.code || !strings.HasPrefix(se.ErrStatus.Message, tc.msg) {
				t.Fatalf("got %#v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}

func TestUpdateOnCreateAndReset(t *testing.T) {
	t.Parallel()
	k := kind(t, "ConfigMap")
	cm := &api.ConfigMap{TypeMeta: api.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: api.ObjectMeta{Name: "c", Namespace: "default"}, Data: map[string]string{"a": "1"}}
	k.Update(nil, cm, "kubectl-create", "")
	if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "kubectl-create" ||
		fields(t, cm.ManagedFields[0]) != `{"f:data":{".":{},"f:a":{}}}` {
		t.Fatalf("create: %+v", cm.ManagedFields)
	}
	// An empty list resets them; the update is then recorded alone.
	next := api.DeepCopyObject(cm).(*api.ConfigMap)
	next.Data["b"] = "2"
	next.ManagedFields = []api.ManagedFieldsEntry{}
	k.Update(cm, next, "other", "")
	if len(next.ManagedFields) != 1 || next.ManagedFields[0].Manager != "other" {
		t.Fatalf("reset: %+v", next.ManagedFields)
	}
	// No list keeps the live ones.
	again := api.DeepCopyObject(next).(*api.ConfigMap)
	again.ManagedFields = nil
	again.Data["c"] = "3"
	k.Update(next, again, "third", "")
	if len(again.ManagedFields) != 2 {
		t.Fatalf("keep: %+v", again.ManagedFields)
	}
}

// TestEveryKindApplies checks the published schemas give the type
// converter every served kind: a minimal configuration of each applies,
// and a Service's ports merge by port and protocol, TCP by default.
func TestEveryKindApplies(t *testing.T) {
	t.Parallel()
	for _, ri := range api.Resources {
		t.Run(ri.Kind, func(t *testing.T) {
			t.Parallel()
			cfg := `{"apiVersion":"` + ri.GroupVersion() + `","kind":"` + ri.Kind + `","metadata":{"name":"x","labels":{"a":"b"}}}`
			obj, err := manager(t).For(ri).Apply(nil, []byte(cfg), "m", "", false)
			if err != nil {
				t.Fatal(err)
			}
			if obj.GetObjectMeta().Labels["a"] != "b" || len(obj.GetObjectMeta().ManagedFields) != 1 {
				t.Errorf("applied %+v", obj.GetObjectMeta())
			}
		})
	}
	k := kind(t, "Service")
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - {port: 80, name: http}\n  - {port: 80, protocol: UDP, name: dns}\n"
	obj, err := k.Apply(nil, []byte(svc), "m", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if f := fields(t, obj.GetObjectMeta().ManagedFields[0]); !strings.Contains(f, `"k:{\"port\":80,\"protocol\":\"TCP\"}"`) ||
		!strings.Contains(f, `"k:{\"port\":80,\"protocol\":\"UDP\"}"`) {
		t.Errorf("service ports: %s", f)
	}
}

// TestApplyV137Fields: server-side apply of objects with the fields of
// k8s.io/api v0.37 our types gained for field parity (pods, nodes, jobs)
// keeps every one (the schema is built from our types, so a field it lacks
// fails the apply with "field not declared in schema").
func TestApplyV137Fields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ kind, file string }{
		{"Pod", "pod_v137_fields.json"},
		{"Node", "node_v137_fields.json"},
		{"Job", "job_v137_fields.json"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			in, err := os.ReadFile("../../api/testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := kind(t, tc.kind).Apply(nil, in, "m", "", false)
			if err != nil {
				t.Fatal(err)
			}
			obj.GetObjectMeta().ManagedFields = nil
			out, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(in, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("applied object differs:\n%s\n%s", in, out)
			}
		})
	}
}
