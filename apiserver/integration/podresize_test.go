package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestPodResizeClientGo drives pods/resize as the conformance specs "Pod
// InPlace Resize Container ..." do, with client-go's defaults (protobuf):
// the strategic-merge patch podresize.MakeResizePatch makes
// (CreateTwoWayMergePatch of two pods, with $setElementOrder), then
// UpdateResize (PUT of the whole pod), and the Pod read through the
// subresource by the dynamic client equals the Pod's.
func TestPodResizeClientGo(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cfg := &rest.Config{Host: s.URL(), QPS: 100, Burst: 200}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := resource.MustParse
	mk := func(c1, c2 corev1.ResourceRequirements) *corev1.Pod {
		zero := int64(0)
		return &corev1.Pod{Spec: corev1.PodSpec{
			OS: &corev1.PodOS{Name: corev1.Linux}, RestartPolicy: corev1.RestartPolicyOnFailure, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{
				{Name: "c1", Image: "busybox", Command: []string{"/bin/sh"}, Args: []string{"-c", "sleep 1d"}, Resources: c1},
				{Name: "c2", Image: "busybox", Command: []string{"/bin/sh"}, Args: []string{"-c", "sleep 1d"}, Resources: c2},
			}}}
	}
	orig := mk(corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("20m")}},
		corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("35Mi")}})
	want := mk(corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("25m")}, Limits: corev1.ResourceList{corev1.ResourceCPU: q("35m")}},
		corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("30Mi")}, Limits: corev1.ResourceList{corev1.ResourceMemory: q("50Mi")}})

	pods := cs.CoreV1().Pods("default")
	create := orig.DeepCopy()
	create.GenerateName = "resize-test-"
	created, err := pods.Create(ctx, create, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := json.Marshal(orig)
	w, _ := json.Marshal(want)
	patch, err := strategicpatch.CreateTwoWayMergePatch(o, w, corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("patch: %s", patch)
	patched, err := pods.Patch(ctx, created.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatalf("patch pods/resize: %v", err)
	}
	if patched.Generation != 2 {
		t.Errorf("generation %d after the resize, want 2", patched.Generation)
	}
	for i, c := range patched.Spec.Containers {
		wc := want.Spec.Containers[i]
		if c.Name != wc.Name || !c.Resources.Requests.Cpu().Equal(*wc.Resources.Requests.Cpu()) || !c.Resources.Limits.Cpu().Equal(*wc.Resources.Limits.Cpu()) ||
			!c.Resources.Requests.Memory().Equal(*wc.Resources.Requests.Memory()) || !c.Resources.Limits.Memory().Equal(*wc.Resources.Limits.Memory()) {
			t.Errorf("container %d after the patch: %+v, want %+v", i, c.Resources, wc.Resources)
		}
		if c.Image != "busybox" || len(c.Args) != 2 {
			t.Errorf("container %d lost its spec: %+v", i, c)
		}
	}

	// UpdateResize, protobuf in and out.
	cur, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = q("30m")
	updated, err := pods.UpdateResize(ctx, created.Name, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateResize: %v", err)
	}
	if got := updated.Spec.Containers[0].Resources.Requests.Cpu(); got.MilliValue() != 30 || updated.Generation != 3 {
		t.Errorf("after UpdateResize: cpu request %v, generation %d", got, updated.Generation)
	}

	// The subresource reads the Pod, as the dynamic client sees it.
	u, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("default").Get(ctx, created.Name, metav1.GetOptions{}, "resize")
	if err != nil {
		t.Fatalf("GET pods/resize: %v", err)
	}
	if u.GetResourceVersion() != updated.ResourceVersion || u.GetGeneration() != 3 {
		t.Errorf("GET pods/resize: resourceVersion %s generation %d, want %s and 3", u.GetResourceVersion(), u.GetGeneration(), updated.ResourceVersion)
	}
}
