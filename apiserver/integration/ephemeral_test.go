package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestEphemeralContainersClientGo drives pods/ephemeralcontainers with
// client-go's defaults (protobuf): UpdateEphemeralContainers, a
// strategic-merge patch as kubectl debug sends, GET, refusals with kube's
// words, and discovery of the streaming subresources.
func TestEphemeralContainersClientGo(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 100, Burst: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods := cs.CoreV1().Pods("default")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	withDebugger := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "dbg", Image: "busybox", Stdin: true, TTY: true}, TargetContainerName: "app"}}}}
	out, err := pods.UpdateEphemeralContainers(ctx, "p", withDebugger, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateEphemeralContainers: %v", err)
	}
	if len(out.Spec.EphemeralContainers) != 1 || out.Spec.EphemeralContainers[0].TerminationMessagePolicy != corev1.TerminationMessageReadFile ||
		out.Spec.EphemeralContainers[0].ImagePullPolicy != corev1.PullAlways || len(out.Spec.Containers) != 1 {
		t.Errorf("after the update: %+v", out.Spec)
	}
	// Only spec.ephemeralContainers is taken from the body.
	if out.Spec.Containers[0].Image != "busybox" {
		t.Errorf("containers changed: %+v", out.Spec.Containers)
	}

	patch := `{"spec":{"ephemeralContainers":[{"name":"dbg2","image":"busybox","terminationMessagePolicy":"File"}]}}`
	out, err = pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "ephemeralcontainers")
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	// Without $setElementOrder a strategic merge puts new items first, as
	// Kubernetes' does.
	if len(out.Spec.EphemeralContainers) != 2 || out.Spec.EphemeralContainers[0].Name != "dbg2" || out.Spec.EphemeralContainers[1].Name != "dbg" {
		t.Errorf("after the patch: %+v", out.Spec.EphemeralContainers)
	}
	var got corev1.Pod
	if err := cs.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").Name("p").SubResource("ephemeralcontainers").
		Do(ctx).Into(&got); err != nil || len(got.Spec.EphemeralContainers) != 2 {
		t.Errorf("GET ephemeralcontainers: %v %+v", err, got.Spec.EphemeralContainers)
	}

	for _, tc := range []struct {
		name, patch, want string
	}{
		{"change", `{"spec":{"ephemeralContainers":[{"name":"dbg","image":"other"}]}}`,
			`spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed`},
		{"remove", `{"spec":{"ephemeralContainers":[{"$patch":"delete","name":"dbg"}]}}`,
			`spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed`},
		{"ports", `{"spec":{"ephemeralContainers":[{"name":"web","image":"nginx","ports":[{"containerPort":80}]}]}}`,
			`spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container`},
	} {
		_, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(tc.patch), metav1.PatchOptions{}, "ephemeralcontainers")
		var se *apierrors.StatusError
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 422 with %q", tc.name, err, tc.want)
		} else if ok := errorsAs(err, &se); !ok || se.ErrStatus.Details == nil || se.ErrStatus.Details.Name != "p" || se.ErrStatus.Details.Kind != "Pod" {
			t.Errorf("%s: details %+v", tc.name, se.ErrStatus.Details)
		}
	}
	// A pod is never created with them, nor given them by a plain update.
	bad := pod.DeepCopy()
	bad.Name = "q"
	bad.Spec.EphemeralContainers = withDebugger.Spec.EphemeralContainers
	if _, err := pods.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "spec.ephemeralContainers: Forbidden: cannot be set on create") {
		t.Errorf("create with ephemeral containers: %v", err)
	}

	rl, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"pods/ephemeralcontainers": {"get", "patch", "update"}, "pods/attach": {"create", "get"},
		"pods/portforward": {"create", "get"}, "pods/exec": {"create", "get"}}
	for _, r := range rl.APIResources {
		if verbs, ok := want[r.Name]; ok {
			if !slices.Equal([]string(r.Verbs), verbs) {
				t.Errorf("%s verbs %v, want %v", r.Name, r.Verbs, verbs)
			}
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("discovery lacks %v", want)
	}
}
