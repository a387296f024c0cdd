package history

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minik8s/minik8s/api"
)

func TestTemplatePatchRoundTrip(t *testing.T) {
	t.Parallel()
	tmpl := &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx:1"}}}}
	data, err := TemplatePatch(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"$patch":"replace"`) {
		t.Errorf("patch %s does not replace the template", data)
	}
	got, err := Template(&api.ControllerRevision{Data: data})
	if err != nil || got.Spec.Containers[0].Image != "nginx:1" || got.Labels["app"] != "web" {
		t.Fatalf("Template = %+v, %v", got, err)
	}
}

func TestNewNameHashAndEqual(t *testing.T) {
	t.Parallel()
	meta := &api.ObjectMeta{Name: "web", Namespace: "ns"}
	a := New(meta, api.OwnerReference{Name: "web"}, map[string]string{"app": "web"}, []byte(`{"a": 1}`), 1, nil)
	if a.Name != "web-"+a.Labels[HashLabel] || a.Labels["app"] != "web" || a.Namespace != "ns" || a.Revision != 1 {
		t.Fatalf("revision %+v", a)
	}
	one := int32(1)
	if c := New(meta, api.OwnerReference{}, nil, []byte(`{"a": 1}`), 1, &one); c.Name == a.Name {
		t.Errorf("a collision count does not change the name")
	}
	b := New(meta, api.OwnerReference{}, nil, []byte(`{"a":1}`), 2, nil)
	if !Equal(a, b) {
		t.Errorf("revisions differing in whitespace only are not equal")
	}
	if Equal(a, New(meta, api.OwnerReference{}, nil, []byte(`{"a":2}`), 2, nil)) {
		t.Errorf("different data equal")
	}
}

func TestSortAndNext(t *testing.T) {
	t.Parallel()
	revs := []*api.ControllerRevision{{Revision: 3}, {Revision: 1}, {Revision: 2}}
	Sort(revs)
	if revs[0].Revision != 1 || revs[2].Revision != 3 || Next(revs) != 4 || Next(nil) != 1 {
		t.Fatalf("sorted %d %d %d, next %d", revs[0].Revision, revs[1].Revision, revs[2].Revision, Next(revs))
	}
}

// TestTemplatePatchAsKube compares a revision's data with kube's getPatch
// of the same template encoded by k8s.io/api: kube's daemon.Match, which
// the conformance suite's DaemonSet specs call, compares them byte for
// byte ("resources":{} left out failed "should update pod when spec was
// updated and update strategy is RollingUpdate").
func TestTemplatePatchAsKube(t *testing.T) {
	t.Parallel()
	labels := map[string]string{"daemonset-name": "daemon-set"}
	kube := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox", TerminationMessagePath: "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}},
		Containers: []corev1.Container{
			{Name: "app", Image: "registry.k8s.io/e2e-test-images/agnhost:2.66.1", SecurityContext: &corev1.SecurityContext{},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent, Ports: []corev1.ContainerPort{{ContainerPort: 9376, Protocol: corev1.ProtocolTCP}}},
			{Name: "limited", Image: "busybox", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m")}}},
		},
		RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SecurityContext: &corev1.PodSecurityContext{},
		SchedulerName: "default-scheduler", TerminationGracePeriodSeconds: ptr.To[int64](30),
	}}
	// kube's getPatch (pkg/controller/daemon/update.go), on the template of
	// a typed DaemonSet.
	ds, err := json.Marshal(appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: kube}})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(ds, &raw); err != nil {
		t.Fatal(err)
	}
	tmpl := raw["spec"].(map[string]any)["template"].(map[string]any)
	tmpl["$patch"] = "replace"
	want, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
	if err != nil {
		t.Fatal(err)
	}

	b, err := json.Marshal(kube)
	if err != nil {
		t.Fatal(err)
	}
	var ours api.PodTemplateSpec
	if err := json.Unmarshal(b, &ours); err != nil {
		t.Fatal(err)
	}
	got, err := TemplatePatch(&ours)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("TemplatePatch =\n%s\nkube's getPatch =\n%s", got, want)
	}
}
