package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestClientGoRoundTrip drives the apiserver with a standard Kubernetes Go
// client: create, get, list, watch, update, patch and delete of Pods,
// Deployments and Nodes; with client-go's default content settings
// (protobuf bodies and answers, as typed clients send) and told to speak
// JSON (as clients of custom resources and dynamic clients do).
func TestClientGoRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content rest.ContentConfig
	}{
		{"default", rest.ContentConfig{}},
		{"json", rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clientGoRoundTrip(t, tc.content)
		})
	}
}

func clientGoRoundTrip(t *testing.T, content rest.ContentConfig) {
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 100, Burst: 200, ContentConfig: content})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sv, err := cs.Discovery().ServerVersion()
	if err != nil || sv.Major == "" {
		t.Fatalf("server version: %v %v", sv, err)
	}

	_, resources, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	found := map[string]bool{}
	for _, rl := range resources {
		for _, r := range rl.APIResources {
			found[rl.GroupVersion+"/"+r.Name] = true
		}
	}
	for _, want := range []string{"v1/pods", "v1/pods/status", "v1/pods/binding", "v1/nodes", "v1/namespaces",
		"apps/v1/deployments", "apps/v1/deployments/scale", "apps/v1/replicasets", "batch/v1/jobs",
		"coordination.k8s.io/v1/leases", "discovery.k8s.io/v1/endpointslices", "v1/events", "v1/configmaps", "v1/services", "v1/endpoints"} {
		if !found[want] {
			t.Errorf("discovery lacks %s", want)
		}
	}

	t.Run("pods", func(t *testing.T) {
		pods := cs.CoreV1().Pods("default")
		w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "app=cg"})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "cg", Labels: map[string]string{"app": "cg"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: "busybox:1.36",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			}}},
		}
		created, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.UID == "" || created.ResourceVersion == "" || created.Status.Phase != corev1.PodPending {
			t.Fatalf("created pod: uid=%q rv=%q phase=%q", created.UID, created.ResourceVersion, created.Status.Phase)
		}
		if created.Spec.RestartPolicy != corev1.RestartPolicyAlways || created.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
			t.Fatalf("defaults not applied: %+v", created.Spec)
		}
		expectEvent(t, w, watch.Added, "cg")
		got, err := pods.Get(ctx, "cg", metav1.GetOptions{})
		if err != nil || got.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() != 100 {
			t.Fatalf("get: %v %+v", err, got)
		}
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=cg"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list: %v %d", err, len(list.Items))
		}
		got.Spec.Containers[0].Image = "busybox:1.37"
		upd, err := pods.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil || upd.Spec.Containers[0].Image != "busybox:1.37" {
			t.Fatalf("update: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cg")
		// A stale update is a conflict client-go recognises.
		got.Spec.Containers[0].Image = "busybox:1.38"
		if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("stale update: %v", err)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"x": "y"}}})
		pt, err := pods.Patch(ctx, "cg", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil || pt.Annotations["x"] != "y" {
			t.Fatalf("patch: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cg")
		if err := pods.Delete(ctx, "cg", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "cg")
		if _, err := pods.Get(ctx, "cg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get after delete: %v", err)
		}
	})

	t.Run("deployments", func(t *testing.T) {
		deps := cs.AppsV1().Deployments("default")
		replicas := int32(2)
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "cgd"},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cgd"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cgd"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
				},
			},
		}
		w, err := deps.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		created, err := deps.Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || *created.Spec.RevisionHistoryLimit != 10 {
			t.Fatalf("defaults: %+v", created.Spec)
		}
		expectEvent(t, w, watch.Added, "cgd")
		created.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		upd, err := deps.Update(ctx, created, metav1.UpdateOptions{})
		if err != nil || upd.Generation != 2 {
			t.Fatalf("update: %v generation=%d", err, upd.Generation)
		}
		expectEvent(t, w, watch.Modified, "cgd")
		sc, err := deps.GetScale(ctx, "cgd", metav1.GetOptions{})
		if err != nil || sc.Spec.Replicas != 2 {
			t.Fatalf("get scale: %v %+v", err, sc)
		}
		sc.Spec.Replicas = 5
		if _, err := deps.UpdateScale(ctx, "cgd", sc, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update scale: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cgd")
		pt, err := deps.Patch(ctx, "cgd", types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{})
		if err != nil || !pt.Spec.Paused || *pt.Spec.Replicas != 5 {
			t.Fatalf("patch: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cgd")
		list, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list all namespaces: %v %d", err, len(list.Items))
		}
		if err := deps.Delete(ctx, "cgd", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "cgd")
	})

	t.Run("nodes", func(t *testing.T) {
		nodes := cs.CoreV1().Nodes()
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "cgn", Labels: map[string]string{"kubernetes.io/hostname": "cgn"}},
			Status: corev1.NodeStatus{
				Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
		created, err := nodes.Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.Status.Capacity.Memory().Value() != 8<<30 {
			t.Fatalf("node status not kept on create: %+v", created.Status)
		}
		w, err := nodes.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		created.Spec.Unschedulable = true
		if _, err := nodes.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cgn")
		st, err := nodes.Get(ctx, "cgn", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st.Status.Conditions[0].Status = corev1.ConditionFalse
		if _, err := nodes.UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cgn")
		if _, err := nodes.Patch(ctx, "cgn", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"zone":"a"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patch: %v", err)
		}
		expectEvent(t, w, watch.Modified, "cgn")
		l, err := nodes.List(ctx, metav1.ListOptions{FieldSelector: "spec.unschedulable=true"})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("list by field: %v %d", err, len(l.Items))
		}
		if err := nodes.Delete(ctx, "cgn", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "cgn")
	})
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed waiting for %s %s", typ, name)
		}
		if ev.Type != typ {
			t.Fatalf("event %s (%v), want %s %s", ev.Type, ev.Object, typ, name)
		}
		m, err := metaAccessor(ev.Object)
		if err != nil || m.GetName() != name {
			t.Fatalf("event object %v, want %s", ev.Object, name)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s event for %s", typ, name)
	}
}

func metaAccessor(obj any) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, &json.UnsupportedTypeError{}
	}
	return m, nil
}
