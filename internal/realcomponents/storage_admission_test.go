package realcomponents

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestStorageAdmissionAsKube sends kube-apiserver v1.37 and minik8s the
// same claims, volumes and VolumeAttributesClass and compares what the
// DefaultStorageClass and StorageObjectInUseProtection admission plugins
// made of them: the protection finalizer of each kind; a claim without a
// class left without one while no class is default, then given the
// newest default class (of two, the older one first by name); a claim
// naming a class, or "", keeping it.
func TestStorageAdmissionAsKube(t *testing.T) {
	both := startBoth(t)
	const (
		claims  = "/api/v1/namespaces/default/persistentvolumeclaims"
		classes = "/apis/storage.k8s.io/v1/storageclasses"
	)
	claim := func(name, class string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{` + class + `"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`
	}
	// What the plugins decide: the finalizers and the spec (status and
	// the server's own metadata left out).
	same := func(what, path, body string) {
		t.Helper()
		var got [2]string
		for i, e := range both.each() {
			out := e.must(t, http.StatusCreated, "POST", path, body)
			md := out["metadata"].(map[string]any)
			b, _ := json.Marshal(map[string]any{"finalizers": md["finalizers"], "spec": out["spec"]})
			got[i] = string(b)
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s:\nkube-apiserver: %s\nminik8s:        %s", what, got[0], got[1])
		}
		t.Logf("%s: %s", what, got[0])
	}

	same("a claim, no default class", claims, claim("no-default", ""))
	same("a volume", "/api/v1/persistentvolumes", `{"metadata":{"name":"pv0"},"spec":{"capacity":{"storage":"1Gi"},
		"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/pv0"}}}`)
	same("a VolumeAttributesClass", "/apis/storage.k8s.io/v1/volumeattributesclasses", `{"metadata":{"name":"gold"},"driverName":"example.com/disk","parameters":{"iops":"100"}}`)
	same("a claim with its finalizer already", claims, `{"metadata":{"name":"own-finalizer","finalizers":["example.com/keep","kubernetes.io/pvc-protection"]},
		"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)

	// Two default classes: the newest wins, though its name sorts first
	// the other way round. creationTimestamp has a second's precision.
	both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"a-older","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"example.com/a"}`)
	time.Sleep(1100 * time.Millisecond)
	both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"b-newer","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"example.com/b"}`)
	both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"c-plain"},"provisioner":"example.com/c"}`)
	// kube-apiserver's plugin reads an informer: wait until it sees the
	// newer class.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, out := both.kube.do(t, "POST", claims+"?dryRun=All", claim("probe", ""))
		if spec, _ := out["spec"].(map[string]any); spec["storageClassName"] == "b-newer" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver does not default claims to the newer class: %v", out)
		}
	}
	same("a claim, two default classes", claims, claim("defaulted", ""))
	same("a claim of a class", claims, claim("classed", `"storageClassName":"c-plain",`))
	same("a claim of no class", claims, claim("classless", `"storageClassName":"",`))
	same("a claim of the beta annotation", claims, `{"metadata":{"name":"beta","annotations":{"volume.beta.kubernetes.io/storage-class":"c-plain"}},
		"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)
}
