package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api/resource"
)

// assertNoSharing walks a and b (equal values) in parallel and fails when
// they share a pointer, slice backing array or map.
func assertNoSharing(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		// Pointers to zero-size values may all share one address.
		if a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			t.Errorf("%s: pointer shared", path)
			return
		}
		assertNoSharing(t, path, a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: slice shared", path)
			return
		}
		for i := range a.Len() {
			assertNoSharing(t, path+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: map shared", path)
			return
		}
		it := a.MapRange()
		for it.Next() {
			assertNoSharing(t, path+"{}", it.Value(), b.MapIndex(it.Key()))
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				assertNoSharing(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
			}
		}
	}
}

func TestDeepCopyObjectEveryKind(t *testing.T) {
	t.Parallel()
	for _, r := range Resources {
		t.Run(r.Kind, func(t *testing.T) {
			t.Parallel()
			obj := r.New()
			fill(reflect.ValueOf(obj).Elem(), 0)
			cp := DeepCopyObject(obj)
			if !reflect.DeepEqual(obj, cp) {
				t.Fatalf("copy differs from original")
			}
			assertNoSharing(t, r.Kind, reflect.ValueOf(obj), reflect.ValueOf(cp))
		})
	}
	if DeepCopyObject(nil) != nil || DeepCopyObject((*Pod)(nil)) != nil {
		t.Error("DeepCopyObject(nil) is not nil")
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	t.Parallel()
	orig := filled[Pod]()
	before, _ := json.Marshal(orig)
	cp := DeepCopy(orig)
	cp.Labels["new"] = "x"
	cp.Spec.Containers[0].Image = "changed"
	cp.Spec.Containers[0].Resources.Limits[ResourceCPU] = resource.MustParse("3")
	*cp.Spec.TerminationGracePeriodSeconds = 99
	*cp.Spec.Volumes[0].Projected.Sources[0].ClusterTrustBundle.Name = "X"
	*cp.Spec.Volumes[0].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = 1
	cp.ManagedFields[0].FieldsV1.Raw[0] = 'X'
	cp.Status.Conditions = append(cp.Status.Conditions[:0], PodCondition{Type: "Other"})
	after, _ := json.Marshal(orig)
	if string(before) != string(after) {
		t.Errorf("mutating the copy changed the original")
	}
	if DeepCopy[Pod](nil) != nil {
		t.Error("DeepCopy(nil) is not nil")
	}
}

// A recursive type must not hang plan construction.
type recursive struct {
	Name string
	Next *recursive
	Kids []recursive
}

func TestDeepCopyRecursiveType(t *testing.T) {
	t.Parallel()
	in := &recursive{Name: "a", Next: &recursive{Name: "b"}, Kids: []recursive{{Name: "c", Next: &recursive{Name: "d"}}}}
	out := DeepCopy(in)
	if !reflect.DeepEqual(in, out) {
		t.Fatal("copy differs")
	}
	assertNoSharing(t, "recursive", reflect.ValueOf(in), reflect.ValueOf(out))
}

func benchmarkPod() *Pod {
	p := &Pod{}
	if err := json.Unmarshal([]byte(`{
	  "apiVersion": "v1", "kind": "Pod",
	  "metadata": {"name": "web-7d4b9c-abcde", "namespace": "default", "uid": "8f0e2a5c-1111-2222-3333-444455556666",
	    "resourceVersion": "12345", "creationTimestamp": "2024-01-02T03:04:05Z",
	    "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
	    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c", "uid": "u1", "controller": true, "blockOwnerDeletion": true}]},
	  "spec": {
	    "containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
	      "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
	      "readinessProbe": {"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
	      "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
	      "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
	    "volumes": [{"name": "kube-api-access", "emptyDir": {}}],
	    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
	    "nodeName": "node-1", "schedulerName": "default-scheduler", "securityContext": {},
	    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
	  "status": {"phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}],
	    "startTime": "2024-01-02T03:04:06Z", "qosClass": "Burstable",
	    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-02T03:04:09Z"},
	      {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05Z"}],
	    "containerStatuses": [{"name": "nginx", "ready": true, "restartCount": 0, "image": "nginx:1.25", "imageID": "sha256:abc",
	      "containerID": "containerd://abc", "started": true, "state": {"running": {"startedAt": "2024-01-02T03:04:08Z"}}}]}
	}`), p); err != nil {
		panic(err)
	}
	return p
}

func BenchmarkDeepCopyPod(b *testing.B) {
	p := benchmarkPod()
	b.ReportAllocs()
	for b.Loop() {
		_ = DeepCopy(p)
	}
}

// BenchmarkJSONRoundTripPod is the alternative DeepCopy avoids.
func BenchmarkJSONRoundTripPod(b *testing.B) {
	p := benchmarkPod()
	b.ReportAllocs()
	for b.Loop() {
		data, _ := json.Marshal(p)
		var out Pod
		_ = json.Unmarshal(data, &out)
	}
}
