package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// resources is cpu, memory and ephemeral-storage, each when not "".
func resources(cpu, mem, disk string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourceEphemeralStorage: disk} {
		if v != "" {
			out[name] = resource.MustParse(v)
		}
	}
	return out
}

// TestLimitRanger follows Kubernetes' LimitRange conformance test with
// client-go: a Container LimitRange's defaults land on pods that lack
// them (merged with what a pod states, and recorded in the
// kubernetes.io/limit-ranger annotation); pods under min or over max are
// refused with every violation; an update of the range applies to the
// next pod; Pod and PersistentVolumeClaim items are enforced too.
func TestLimitRanger(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 100, Burst: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lrs, pods := cs.CoreV1().LimitRanges("default"), cs.CoreV1().Pods("default")
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limit-range"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer,
		Min:  resources("50m", "100Mi", "100Gi"), Max: resources("500m", "500Mi", "500Gi"),
		Default: resources("500m", "500Mi", "500Gi"), DefaultRequest: resources("100m", "200Mi", "200Gi"),
	}}}}
	if lr, err = lrs.Create(ctx, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	newPod := func(name string, req, lim corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10.2", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}}}
	}
	same := func(what string, got, want corev1.ResourceList) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g.Cmp(v) != 0 {
				t.Errorf("%s: %s = %s, want %s", what, k, g.String(), v.String())
			}
		}
	}

	p, err := pods.Create(ctx, newPod("pod-no-resources", nil, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same("defaulted requests", p.Spec.Containers[0].Resources.Requests, resources("100m", "200Mi", "200Gi"))
	same("defaulted limits", p.Spec.Containers[0].Resources.Limits, resources("500m", "500Mi", "500Gi"))
	if got, want := p.Annotations["kubernetes.io/limit-ranger"], "LimitRanger plugin set: cpu, ephemeral-storage, memory request for container pause; cpu, ephemeral-storage, memory limit for container pause"; got != want {
		t.Errorf("annotation %q\nwant %q", got, want)
	}
	// A limit without a request defaults the request to the limit (API
	// defaulting, before admission): the range's default request is not used.
	p, err = pods.Create(ctx, newPod("pod-partial-resources", resources("", "150Mi", "150Gi"), resources("300m", "", "")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same("merged requests", p.Spec.Containers[0].Resources.Requests, resources("300m", "150Mi", "150Gi"))
	same("merged limits", p.Spec.Containers[0].Resources.Limits, resources("300m", "500Mi", "500Gi"))

	_, err = pods.Create(ctx, newPod("under", resources("10m", "50Mi", "50Gi"), nil), metav1.CreateOptions{})
	want := `pods "under" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, minimum ephemeral-storage usage per Container is 100Gi, but request is 50Gi, minimum memory usage per Container is 100Mi, but request is 50Mi]`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("pod under min: %v\nwant %s", err, want)
	}
	// Requests over max and no limits: the default limits (the max) land
	// first, and validation refuses requests above them, as in kube.
	_, err = pods.Create(ctx, newPod("over", resources("600m", "600Mi", "600Gi"), nil), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("requests over the defaulted limits: %v", err)
	}
	_, err = pods.Create(ctx, newPod("over", resources("600m", "600Mi", "600Gi"), resources("600m", "600Mi", "600Gi")), metav1.CreateOptions{})
	want = `pods "over" is forbidden: [maximum cpu usage per Container is 500m, but limit is 600m, maximum ephemeral-storage usage per Container is 500Gi, but limit is 600Gi, maximum memory usage per Container is 500Mi, but limit is 600Mi]`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("pod over max: %v\nwant %s", err, want)
	}

	lr.Spec.Limits[0].Min = resources("9m", "49Mi", "49Gi")
	if _, err := lrs.Update(ctx, lr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = pods.Create(ctx, newPod("under-former-min", resources("10m", "50Mi", "50Gi"), nil), metav1.CreateOptions{})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("pod under the former min after the update: %v", err)
	}
	if err := lrs.Delete(ctx, "limit-range", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A Pod item bounds the pod's sum; a ratio item its limit/request.
	podLR := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "pod-sum"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypePod, Max: resources("1", "", "")},
		{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: resources("2", "", "")},
	}}}
	if _, err := lrs.Create(ctx, podLR, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	two := newPod("two", resources("200m", "", ""), resources("600m", "", ""))
	two.Spec.Containers = append(two.Spec.Containers, corev1.Container{Name: "b", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: resources("500m", "", ""), Limits: resources("500m", "", "")}})
	deadline = time.Now().Add(5 * time.Second)
	for {
		_, err = pods.Create(ctx, two, metav1.CreateOptions{})
		if err != nil || time.Now().After(deadline) {
			break
		}
		_ = pods.Delete(ctx, "two", metav1.DeleteOptions{})
		time.Sleep(50 * time.Millisecond)
	}
	want = `pods "two" is forbidden: [maximum cpu usage per Pod is 1, but limit is 1100m, cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000]`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("pod over the pod max and the ratio: %v\nwant %s", err, want)
	}

	claims := cs.CoreV1().PersistentVolumeClaims("default")
	if _, err := lrs.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "storage"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypePersistentVolumeClaim, Min: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}, Max: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
	}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	big := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}}}}
	deadline = time.Now().Add(5 * time.Second)
	for {
		_, err = claims.Create(ctx, big, metav1.CreateOptions{})
		if err != nil || time.Now().After(deadline) {
			break
		}
		_ = claims.Delete(ctx, "big", metav1.DeleteOptions{})
		time.Sleep(50 * time.Millisecond)
	}
	if want := `persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi`; err == nil || err.Error() != want {
		t.Errorf("claim over max: %v\nwant %s", err, want)
	}
}

// TestLimitRangeAppliesAtOnce: a pod created right after a LimitRange gets
// its defaults although the LimitRange may not have reached the watch cache
// yet (seen as a flake of TestLimitRanger under load): the plugin reads a
// namespace that its cache shows without LimitRanges from storage, as kube's
// LimitRanger does. Each namespace is fresh, so no earlier answer is reused.
func TestLimitRangeAppliesAtOnce(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 500, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 30 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lr-at-once-"}}
		if ns, err = cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, DefaultRequest: resources("100m", "", ""), Default: resources("200m", "", ""),
		}}}}
		if _, err := cs.CoreV1().LimitRanges(ns.Name).Create(ctx, lr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10.2"}}}}
		p, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Spec.Containers[0].Resources.Requests.Cpu(); got.Cmp(resource.MustParse("100m")) != 0 {
			t.Fatalf("round %d: the pod created right after its namespace's LimitRange has cpu request %s, want 100m", i, got)
		}
	}
}
