package ephemeral_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// ephemeralPod is a pod with one generic ephemeral volume, "scratch".
func ephemeralPod(name string) *api.Pod {
	tmpl := map[string]any{"volumeClaimTemplate": map[string]any{
		"metadata": map[string]any{"labels": map[string]string{"app": "db"}, "annotations": map[string]string{"note": "scratch"}},
		"spec": map[string]any{"accessModes": []string{"ReadWriteOnce"}, "storageClassName": "local-path",
			"resources": map[string]any{"requests": map[string]string{"storage": "1Gi"}}},
	}}
	raw, _ := json.Marshal(tmpl)
	return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "eph"}, Spec: api.PodSpec{
		Containers: []api.Container{{Name: "c", Image: "busybox", VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
		Volumes:    []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{Ephemeral: raw}}},
	}}
}

// TestIntegrationEphemeralVolume: the claim POD-VOLUME is made from the
// template, controlled by the pod; a claim of that name the pod does not
// control is left alone and the pod gets kube's FailedBinding event; a
// claim deleted under its pod is made again; the garbage collector
// deletes the claim with its pod.
func TestIntegrationEphemeralVolume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver and the controller-manager")
	}
	// controllermanagertest.Start sets KUBECONFIG: no t.Parallel.
	cl := controllermanagertest.Start(t, []string{"ephemeral-volume", "garbagecollector"}, nil)
	cl.Namespace("eph")
	ctx := cl.Context(2 * time.Minute)
	pods := client.Resource[api.Pod](cl.Client).Namespace("eph")
	claims := client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("eph")

	pod, err := pods.Create(ctx, ephemeralPod("db"))
	if err != nil {
		t.Fatal(err)
	}
	var pvc *api.PersistentVolumeClaim
	cl.Eventually(30*time.Second, "claim db-scratch", func() (bool, error) {
		pvc, err = claims.Get(ctx, "db-scratch")
		return err == nil, err
	})
	ref := api.GetControllerOf(&pvc.ObjectMeta)
	if len(pvc.OwnerReferences) != 1 || ref == nil || ref.UID != pod.UID || ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "db" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner references %+v", pvc.OwnerReferences)
	}
	if !maps.Equal(pvc.Labels, map[string]string{"app": "db"}) || pvc.Annotations["note"] != "scratch" {
		t.Errorf("labels %v, annotations %v", pvc.Labels, pvc.Annotations)
	}
	if q := pvc.Spec.Resources.Requests[api.ResourceStorage]; q.Cmp(resource.MustParse("1Gi")) != 0 || pvc.Spec.StorageClassName == nil ||
		*pvc.Spec.StorageClassName != "local-path" || len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != api.ReadWriteOnce {
		t.Errorf("spec %+v", pvc.Spec)
	}

	// Deleted under its live pod (its protection finalizer, which the
	// admission adds, lifted by hand): made again, with a new UID.
	if err := claims.Delete(ctx, "db-scratch", nil); err != nil {
		t.Fatal(err)
	}
	gone, err := claims.Get(ctx, "db-scratch")
	if err != nil {
		t.Fatal(err)
	}
	gone.Finalizers = nil
	if _, err := claims.Update(ctx, gone); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "claim db-scratch made again", func() (bool, error) {
		again, err := claims.Get(ctx, "db-scratch")
		if err != nil {
			return false, err
		}
		return again.UID != pvc.UID && api.IsControlledBy(&again.ObjectMeta, pod.UID), fmt.Errorf("uid %s", again.UID)
	})

	// Someone else's claim of that name: not used, an event.
	if _, err := claims.Create(ctx, &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "web-scratch"}, Spec: pvc.Spec}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, ephemeralPod("web")); err != nil {
		t.Fatal(err)
	}
	want := "ephemeral volume scratch: PVC eph/web-scratch was not created for pod eph/web (pod is not owner)"
	cl.Eventually(30*time.Second, "the FailedBinding event", func() (bool, error) {
		list, err := client.Resource[api.Event](cl.Client).Namespace("eph").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Kind == "Pod" && ev.InvolvedObject.Name == "web" {
				if ev.Type == api.EventTypeWarning && ev.Reason == "FailedBinding" && ev.Message == want && ev.Source.Component == "ephemeral_volume" {
					return true, nil
				}
				seen = append(seen, ev.Type+" "+ev.Reason+" "+ev.Message+" from "+ev.Source.Component)
			}
		}
		return false, fmt.Errorf("events of web: %q", seen)
	})
	if other, err := claims.Get(ctx, "web-scratch"); err != nil || len(other.OwnerReferences) != 0 {
		t.Errorf("someone else's claim changed: %+v %v", other, err)
	}

	// The pod goes: its claim goes with it (held by its protection
	// finalizer, which no pvc-protection controller lifts here).
	if err := pods.Delete(ctx, "db", &api.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "claim db-scratch garbage collected", func() (bool, error) {
		c, err := claims.Get(ctx, "db-scratch")
		return apierrors.IsNotFound(err) || (err == nil && c.DeletionTimestamp != nil), err
	})
}
