package patch

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The tests in this file use Kubernetes' own types and strategic merge patch
// (test-only dependencies) as the reference.

var k8sKinds = map[string]any{
	"Pod": corev1.Pod{}, "Deployment": appsv1.Deployment{}, "ReplicaSet": appsv1.ReplicaSet{},
	"Job": batchv1.Job{}, "Node": corev1.Node{}, "Service": corev1.Service{},
	"Endpoints": corev1.Endpoints{}, "EndpointSlice": discoveryv1.EndpointSlice{},
	"Namespace": corev1.Namespace{}, "ConfigMap": corev1.ConfigMap{}, "Secret": corev1.Secret{},
	"Event": corev1.Event{}, "Lease": coordinationv1.Lease{},
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// collectTags walks a Go API type and records the patch tags of every field
// by dotted JSON path, list indices left out.
func collectTags(t reflect.Type, path []string, out map[string]Tag, depth int) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth > 40 || t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		jsonTag := f.Tag.Get("json")
		name, _, _ := strings.Cut(jsonTag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name == "-" {
			continue
		}
		if name == "" {
			if f.Anonymous || strings.Contains(jsonTag, "inline") {
				collectTags(ft, path, out, depth+1)
			}
			continue
		}
		p := append(append([]string(nil), path...), name)
		if s, k := f.Tag.Get("patchStrategy"), f.Tag.Get("patchMergeKey"); s != "" || k != "" {
			out[strings.Join(p, ".")] = Tag{MergeKey: k, Strategy: s}
		}
		switch ft.Kind() {
		case reflect.Slice:
			collectTags(ft.Elem(), p, out, depth+1)
		case reflect.Struct:
			collectTags(ft, p, out, depth+1)
		}
	}
}

func TestSchemaMatchesKubernetesTags(t *testing.T) {
	t.Parallel()
	for kind, obj := range k8sKinds {
		want := map[string]Tag{}
		collectTags(reflect.TypeOf(obj), nil, want, 0)
		got := KubernetesSchema(kind).(Tags)
		var diffs []string
		for p, w := range want {
			if g := got[p]; g != w {
				diffs = append(diffs, p+": ours "+g.MergeKey+"|"+g.Strategy+", Kubernetes "+w.MergeKey+"|"+w.Strategy)
			}
		}
		for p, g := range got {
			if _, ok := want[p]; !ok {
				diffs = append(diffs, p+": ours "+g.MergeKey+"|"+g.Strategy+", not tagged in Kubernetes")
			}
		}
		sort.Strings(diffs)
		for _, d := range diffs {
			t.Errorf("%s %s", kind, d)
		}
		if len(want) == 0 {
			t.Errorf("%s: found no tags at all; the walker is broken", kind)
		}
	}
}

func normalize(t *testing.T, b []byte) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// applyCases are strategic merge patches applied by both implementations.
var applyCases = []struct {
	name, kind, original, patch string
}{
	{"change one container image keep other", "Pod",
		`{"spec":{"containers":[{"name":"web","image":"nginx:1"},{"name":"side","image":"busybox"}]}}`,
		`{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}`},
	{"add container goes first without order", "Pod",
		`{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}}`,
		`{"spec":{"containers":[{"name":"d"},{"name":"b","image":"x"}]}}`},
	{"set element order", "Pod",
		`{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}}`,
		`{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"},{"name":"d"}],"containers":[{"name":"d","image":"x"}]}}`},
	{"set element order with server only items", "Pod",
		`{"spec":{"containers":[{"name":"a"},{"name":"s"},{"name":"b"},{"name":"t"}]}}`,
		`{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"a","image":"y"}]}}`},
	{"delete container", "Pod",
		`{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`,
		`{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}`},
	{"replace container list", "Pod",
		`{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`,
		`{"spec":{"containers":[{"name":"z"},{"$patch":"replace"}]}}`},
	{"nested env merge", "Deployment",
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"3"},{"name":"Z","value":"4"}]}]}}}}`},
	{"ports merge by containerPort", "Pod",
		`{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http"},{"containerPort":443}]}]}}`,
		`{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":8080}]}]}}`},
	{"finalizers union", "Pod",
		`{"metadata":{"finalizers":["a","b"]}}`,
		`{"metadata":{"finalizers":["c","a"]}}`},
	{"delete from primitive list", "Pod",
		`{"metadata":{"finalizers":["a","b","c"]}}`,
		`{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}}`},
	{"delete and add primitive", "Pod",
		`{"metadata":{"finalizers":["a","b","c"]}}`,
		`{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"],"$setElementOrder/finalizers":["c","a","d"],"finalizers":["d"]}}`},
	{"labels merge and null delete", "Pod",
		`{"metadata":{"labels":{"a":"1","b":"2"}}}`,
		`{"metadata":{"labels":{"a":null,"c":"3"}}}`},
	{"map delete directive", "Pod",
		`{"metadata":{"labels":{"a":"1"},"annotations":{"x":"y"}}}`,
		`{"metadata":{"labels":{"$patch":"delete"}}}`},
	{"map replace directive", "Pod",
		`{"metadata":{"labels":{"a":"1","b":"2"}}}`,
		`{"metadata":{"labels":{"$patch":"replace","c":"3"}}}`},
	{"taints replaced", "Node",
		`{"spec":{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"b","effect":"NoSchedule"}]}}`,
		`{"spec":{"taints":[{"key":"c","effect":"NoExecute"}]}}`},
	{"node conditions merge by type", "Node",
		`{"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"DiskPressure","status":"False"}]}}`,
		`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}}`},
	{"endpoints subsets replaced", "Endpoints",
		`{"subsets":[{"addresses":[{"ip":"10.0.0.1"}]}]}`,
		`{"subsets":[{"addresses":[{"ip":"10.0.0.2"}]}]}`},
	{"service ports by port", "Service",
		`{"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"}]}}`,
		`{"spec":{"ports":[{"port":443,"targetPort":8443}]}}`},
	{"retainKeys strategy", "Deployment",
		`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`,
		`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`},
	{"retainKeys volume source", "Pod",
		`{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`,
		`{"spec":{"volumes":[{"$retainKeys":["configMap","name"],"name":"v","configMap":{"name":"cm"}}]}}`},
	{"owner references by uid", "ReplicaSet",
		`{"metadata":{"ownerReferences":[{"uid":"1","name":"a","kind":"Deployment","apiVersion":"apps/v1"}]}}`,
		`{"metadata":{"ownerReferences":[{"uid":"2","name":"b","kind":"Deployment","apiVersion":"apps/v1"}]}}`},
	{"int64 survives", "Pod",
		`{"spec":{"activeDeadlineSeconds":9007199254740993}}`,
		`{"spec":{"terminationGracePeriodSeconds":9223372036854775807}}`},
	{"root replace", "ConfigMap",
		`{"data":{"a":"b"}}`,
		`{"$patch":"replace","data":{"c":"d"}}`},
	{"new list under absent parent", "Pod",
		`{"metadata":{"name":"p"}}`,
		`{"spec":{"containers":[{"name":"a","image":"x"}]}}`},
	{"scalar list type change", "Pod",
		`{"spec":{"containers":[{"name":"a","args":["x","y"]}]}}`,
		`{"spec":{"containers":[{"name":"a","args":["z"]}]}}`},
	{"host aliases by ip", "Pod",
		`{"spec":{"hostAliases":[{"ip":"1.1.1.1","hostnames":["a"]}]}}`,
		`{"spec":{"hostAliases":[{"ip":"1.1.1.1","hostnames":["b"]},{"ip":"2.2.2.2","hostnames":["c"]}]}}`},
	{"pod conditions by type", "Pod",
		`{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]}}`,
		`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"podIP":"10.0.0.5"}}`},
}

func TestApplyAgainstKubernetes(t *testing.T) {
	t.Parallel()
	for _, tc := range applyCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := strategicpatch.StrategicMergePatch([]byte(tc.original), []byte(tc.patch), k8sKinds[tc.kind])
			if err != nil {
				t.Fatalf("Kubernetes: %v", err)
			}
			got, err := StrategicMergePatch([]byte(tc.original), []byte(tc.patch), KubernetesSchema(tc.kind))
			if err != nil {
				t.Fatalf("ours: %v", err)
			}
			if g, w := normalize(t, got), normalize(t, want); g != w {
				t.Errorf("result\n ours %s\n k8s  %s", g, w)
			}
		})
	}
}

// diffCases are (original, modified, current) triples for two- and
// three-way patches.
//
// appliedDeviation, when set, is what applying our three-way patch to
// current must give where Kubernetes differs on purpose: Kubernetes'
// $setElementOrder handling reads the original list after its own merge
// has overwritten it in place (slice aliasing), which moves server-only
// items around; ours keeps them after their old neighbours.
var diffCases = []struct {
	name, kind, original, modified, current string
	appliedDeviation                        string
}{
	{"image change", "Deployment",
		`{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y"}]}}}}`,
		`{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"a","image":"x:2"},{"name":"b","image":"y"}]}}}}`,
		`{"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"a","image":"x:1","imagePullPolicy":"IfNotPresent"},{"name":"b","image":"y"}]}}},"status":{"replicas":5}}`, ""},
	{"label removed, foreign label kept", "Deployment",
		`{"metadata":{"name":"d","labels":{"app":"web","tier":"fe"}}}`,
		`{"metadata":{"name":"d","labels":{"app":"web"}}}`,
		`{"metadata":{"name":"d","labels":{"app":"web","tier":"fe","owner":"ops"}}}`, ""},
	{"container removed and added", "Pod",
		`{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`,
		`{"spec":{"containers":[{"name":"c"},{"name":"a"}]}}`,
		`{"spec":{"containers":[{"name":"a","image":"i"},{"name":"b"},{"name":"x"}]}}`,
		`{"spec":{"containers":[{"name":"c"},{"image":"i","name":"a"},{"name":"x"}]}}`},
	{"finalizer removed", "Pod",
		`{"metadata":{"finalizers":["a","b"]}}`,
		`{"metadata":{"finalizers":["b","c"]}}`,
		`{"metadata":{"finalizers":["a","b","z"]}}`, ""},
	{"strategy type change retainKeys", "Deployment",
		`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`,
		`{"spec":{"strategy":{"type":"Recreate"}}}`,
		`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":"25%"}}}}`, ""},
	{"env reorder", "Pod",
		`{"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]}]}}`,
		`{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"2"},{"name":"X","value":"1"}]}]}}`,
		`{"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]}]}}`, ""},
	{"taints replace", "Node",
		`{"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}}`,
		`{"spec":{"taints":[{"key":"b","effect":"NoSchedule"}]}}`,
		`{"spec":{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"node.kubernetes.io/not-ready","effect":"NoExecute"}]}}`, ""},
	{"field removed", "Service",
		`{"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30080}]}}`,
		`{"spec":{"ports":[{"port":80}]}}`,
		`{"spec":{"type":"NodePort","clusterIP":"10.0.0.1","ports":[{"port":80,"nodePort":30080,"protocol":"TCP"}]}}`, ""},
	{"volumes retainKeys", "Pod",
		`{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`,
		`{"spec":{"volumes":[{"name":"v","configMap":{"name":"cm"}}]}}`,
		`{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`, ""},
	{"no change", "ConfigMap",
		`{"data":{"a":"b"}}`, `{"data":{"a":"b"}}`, `{"data":{"a":"b"},"metadata":{"resourceVersion":"5"}}`, ""},
}

func TestDiffAgainstKubernetes(t *testing.T) {
	t.Parallel()
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema := KubernetesSchema(tc.kind)
			want2, err := strategicpatch.CreateTwoWayMergePatch([]byte(tc.original), []byte(tc.modified), k8sKinds[tc.kind])
			if err != nil {
				t.Fatalf("Kubernetes two-way: %v", err)
			}
			got2, err := CreateStrategicMergePatch([]byte(tc.original), []byte(tc.modified), schema)
			if err != nil {
				t.Fatalf("ours two-way: %v", err)
			}
			if g, w := normalize(t, got2), normalize(t, want2); g != w {
				t.Errorf("two-way patch\n ours %s\n k8s  %s", g, w)
			}
			meta, err := strategicpatch.NewPatchMetaFromStruct(k8sKinds[tc.kind])
			if err != nil {
				t.Fatal(err)
			}
			want3, err := strategicpatch.CreateThreeWayMergePatch([]byte(tc.original), []byte(tc.modified), []byte(tc.current), meta, true)
			if err != nil {
				t.Fatalf("Kubernetes three-way: %v", err)
			}
			got3, err := CreateThreeWayStrategicMergePatch([]byte(tc.original), []byte(tc.modified), []byte(tc.current), schema)
			if err != nil {
				t.Fatalf("ours three-way: %v", err)
			}
			if g, w := normalize(t, got3), normalize(t, want3); g != w {
				t.Errorf("three-way patch\n ours %s\n k8s  %s", g, w)
			}
			gotLive, err := StrategicMergePatch([]byte(tc.current), got3, schema)
			if err != nil {
				t.Fatalf("ours apply: %v", err)
			}
			if tc.appliedDeviation != "" {
				if g, w := normalize(t, gotLive), normalize(t, []byte(tc.appliedDeviation)); g != w {
					t.Errorf("applied\n got  %s\n want %s", g, w)
				}
				return
			}
			// Applying the three-way patch to the live object gives the same
			// object in both implementations.
			wantLive, err := strategicpatch.StrategicMergePatch([]byte(tc.current), want3, k8sKinds[tc.kind])
			if err != nil {
				t.Fatalf("Kubernetes apply: %v", err)
			}
			if g, w := normalize(t, gotLive), normalize(t, wantLive); g != w {
				t.Errorf("applied\n ours %s\n k8s  %s", g, w)
			}
		})
	}
}
