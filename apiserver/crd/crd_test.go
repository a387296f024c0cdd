package crd

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/server"
)

const crdJSON = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},
"spec":{"group":"example.com","names":{"plural":"foos","kind":"Foo"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{
"n":{"type":"integer","minimum":1,"default":1},"s":{"type":"string"},"keep":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
"x-kubernetes-validations":[{"rule":"self.n < 5","message":"n must be small"}]}}}},
"subresources":{"status":{},"scale":{"specReplicasPath":".spec.n","statusReplicasPath":".status.n"}}}]}}`

func testCRD(t *testing.T) *api.CustomResourceDefinition {
	t.Helper()
	crd := &api.CustomResourceDefinition{}
	if err := json.Unmarshal([]byte(crdJSON), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func TestStrategyDefaultsAndValidates(t *testing.T) {
	t.Parallel()
	s := NewStrategy()
	crd := testCRD(t)
	s.PrepareForCreate(context.Background(), crd)
	s.DefaultCreate(crd)
	if crd.Spec.Names.ListKind != "FooList" || crd.Spec.Names.Singular != "foo" || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != "None" {
		t.Errorf("defaults: names %+v conversion %+v", crd.Spec.Names, crd.Spec.Conversion)
	}
	if got := crd.Status.StoredVersions; len(got) != 1 || got[0] != "v1" {
		t.Errorf("storedVersions = %v", got)
	}
	if errs := s.Validate(context.Background(), crd); len(errs) != 0 {
		t.Errorf("valid CRD refused: %v", errs)
	}
	bad := api.DeepCopy(crd)
	bad.Spec.Group = "Not A Group"
	bad.Spec.Versions[0].Storage = false
	errs := s.Validate(context.Background(), bad)
	fields := map[string]string{}
	for _, e := range errs {
		fields[e.Field] = e.ErrorBody()
	}
	if !strings.Contains(fields["spec.group"], `Invalid value: "Not A Group": a lowercase RFC 1123 subdomain`) ||
		!strings.Contains(fields["spec.versions"], "must have exactly one version marked as storage version") {
		t.Errorf("errors: %v", fields)
	}
	// Deletion adds the cleanup finalizer and the Terminating condition.
	s.PrepareForDelete(crd)
	if len(crd.Finalizers) != 1 || crd.Finalizers[0] != api.CRDCleanupFinalizer {
		t.Errorf("finalizers = %v", crd.Finalizers)
	}
	if c, ok := condition(crd, api.CRDTerminating); !ok || c.Reason != "InstanceDeletionPending" {
		t.Errorf("Terminating = %+v", c)
	}
}

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	t.Parallel()
	crd := &api.CustomResourceDefinition{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	setCondition(crd, api.CustomResourceDefinitionCondition{Type: "A", Status: "True"}, t0)
	setCondition(crd, api.CustomResourceDefinitionCondition{Type: "A", Status: "True", Reason: "R"}, t0.Add(time.Hour))
	if c, _ := condition(crd, "A"); !c.LastTransitionTime.Equal(t0) || c.Reason != "R" {
		t.Errorf("same status: %+v", c)
	}
	setCondition(crd, api.CustomResourceDefinitionCondition{Type: "A", Status: "False"}, t0.Add(2*time.Hour))
	if c, _ := condition(crd, "A"); !c.LastTransitionTime.Equal(t0.Add(2*time.Hour)) || len(crd.Status.Conditions) != 1 {
		t.Errorf("new status: %+v", crd.Status.Conditions)
	}
}

func TestFreshName(t *testing.T) {
	t.Parallel()
	used := map[string]bool{"bars": true}
	if err := freshName("bars", "", used); err == nil || err.Error() != `"bars" is already in use` {
		t.Errorf("taken name: %v", err)
	}
	if freshName("bars", "bars", used) != nil || freshName("foos", "", used) != nil {
		t.Error("an accepted or free name was refused")
	}
}

func resourceStrategyFor(t *testing.T) *resourceStrategy {
	t.Helper()
	crd := testCRD(t)
	v1, err := toV1(crd)
	if err != nil {
		t.Fatal(err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	v1.Status.AcceptedNames = v1.Spec.Names
	s, err := newResourceStrategy(v1, "v1")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func customObject(t *testing.T, doc string) *api.CustomObject {
	t.Helper()
	o := &api.CustomObject{}
	if err := json.Unmarshal([]byte(doc), o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestResourceStrategy(t *testing.T) {
	t.Parallel()
	s := resourceStrategyFor(t)
	ctx := context.Background()
	o := customObject(t, `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"a","namespace":"ns"},
"spec":{"s":"x","drop":1,"keep":{"any":[1]}},"status":{"n":3}}`)
	m, err := o.Object()
	if err != nil {
		t.Fatal(err)
	}
	m["metadata"].(map[string]any)["bogus"] = "x"
	if got := s.UnknownFields(m); strings.Join(got, ",") != "metadata.bogus,spec.drop,status" { // the schema has no status
		t.Errorf("unknown fields = %v", got)
	}
	s.PrepareForCreate(ctx, o)
	s.DefaultCreate(o)
	data, _ := json.Marshal(o)
	if want := `"spec":{"keep":{"any":[1]},"n":1,"s":"x"}`; !strings.Contains(string(data), want) || strings.Contains(string(data), `"status"`) {
		t.Errorf("prepared object %s, want %s and no status", data, want)
	}
	if errs := s.Validate(ctx, o); len(errs) != 0 {
		t.Errorf("valid object refused: %v", errs)
	}
	bad := customObject(t, `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"a","namespace":"ns"},"spec":{"n":0}}`)
	if errs := s.Validate(ctx, bad); len(errs) != 1 || errs[0].Field != "spec.n" || errs[0].ErrorBody() != "Invalid value: 0: spec.n in body should be greater than or equal to 1" {
		t.Errorf("minimum: %v", errs)
	}
	cel := customObject(t, `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"a","namespace":"ns"},"spec":{"n":7}}`)
	if errs := s.Validate(ctx, cel); len(errs) != 1 || errs[0].Field != "spec" || errs[0].ErrorBody() != "Invalid value: n must be small" {
		t.Errorf("CEL: %v", errs)
	}
	// Scale reads and writes the configured paths.
	o.Status = map[string]any{"n": int64(2)}
	if spec, status, _, err := s.Scale(o); err != nil || spec != 1 || status != 2 {
		t.Errorf("scale = %d %d %v", spec, status, err)
	}
	if err := s.SetReplicas(o, 4); err != nil || o.Content["spec"].(map[string]any)["n"] != int64(4) {
		t.Errorf("set replicas: %v %v", err, o.Content)
	}
}

// The controller marks a served CRD's versions Terminating when its
// deletion starts, while requests read the mark (run with -race).
func TestServingMarksTerminating(t *testing.T) {
	t.Parallel()
	crd := testCRD(t)
	crd.UID, crd.Generation = "u1", 1
	crd.Status.AcceptedNames = api.CustomResourceDefinitionNames{Plural: "foos", Singular: "foo", Kind: "Foo", ListKind: "FooList"}
	crd.Status.Conditions = []api.CustomResourceDefinitionCondition{{Type: api.CRDEstablished, Status: api.ConditionTrue}}
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	cr := &server.CustomResource{}
	c.serving[crd.Name] = &serving{key: servingKey(crd), versions: []*server.CustomResource{cr}}
	c.byGVR["example.com/v1/foos"] = cr

	stop, seen := make(chan struct{}), make(chan struct{})
	readers := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				readers <- n
				return
			default:
			}
			if got, ok := c.Lookup("example.com", "v1", "foos"); ok && got.Terminating.Load() {
				if n++; n == 1 {
					close(seen)
				}
			}
			runtime.Gosched()
		}
	}()
	for i, deleting := range []bool{true, false, true} {
		crd.DeletionTimestamp = nil
		if deleting {
			ts := api.NewTime(time.Now())
			crd.DeletionTimestamp = &ts
		}
		changed, err := c.syncServing(t.Context(), crd)
		if err != nil || !changed || cr.Terminating.Load() != deleting {
			t.Errorf("step %d: syncServing = %v, %v; Terminating %v, want %v", i, changed, err, cr.Terminating.Load(), deleting)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The last step leaves it terminating: the reader sees it, however
	// late it is scheduled.
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
	}
	close(stop)
	if n := <-readers; n == 0 {
		t.Error("no reader saw the CRD terminating")
	}
}

// NormalizeRead says an object changed exactly when pruning or defaulting
// changed it, as a deep comparison with the object read would.
func TestNormalizeReadTellsChange(t *testing.T) {
	t.Parallel()
	s := resourceStrategyFor(t)
	for _, c := range []struct {
		spec    string
		changed bool
	}{
		{`{"n":2,"s":"x"}`, false},
		{`{"n":2,"keep":{"a":null,"b":[null,{}]}}`, false},
		{`{"s":"x"}`, true},        // n defaulted
		{`{"n":null}`, true},       // a null n is defaulted
		{`{"n":2,"drop":1}`, true}, // pruned
		{`{}`, true},
	} {
		o := customObject(t, `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"a","namespace":"ns"},"spec":`+c.spec+`}`)
		before, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		got := s.NormalizeRead(o)
		after, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.changed || got != (string(before) != string(after)) {
			t.Errorf("spec %s: changed = %v, want %v (%s -> %s)", c.spec, got, c.changed, before, after)
		}
	}
}

// Fields reads the selectable fields, numbers and booleans as text and a
// missing one as "".
func TestSelectableFields(t *testing.T) {
	t.Parallel()
	crd := testCRD(t)
	v1, err := toV1(crd)
	if err != nil {
		t.Fatal(err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	v1.Status.AcceptedNames = v1.Spec.Names
	v1.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.s"}, {JSONPath: ".spec.n"}}
	s, err := newResourceStrategy(v1, "v1")
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		`{"s":"x","n":3}`: "spec.n=3,spec.s=x",
		`{"n":2}`:         "spec.n=2,spec.s=",
	} {
		o := customObject(t, `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"a","namespace":"ns","labels":{"l":"v"}},"spec":`+doc+`}`)
		fs := s.Fields(o)
		got := "spec.n=" + fs["spec.n"] + ",spec.s=" + fs["spec.s"]
		if got != want || len(fs) != 2 {
			t.Errorf("spec %s: fields %v, want %s", doc, fs, want)
		}
	}
}
