package realcomponents

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
)

// TestEphemeralVolumeControllerAsKube runs the real
// kube-controller-manager's ephemeral-volume-controller against
// kube-apiserver, and ours against our apiserver, on the same pods with
// generic ephemeral volumes, and compares the claims each made (name,
// labels, annotations, owner reference, finalizers, spec after the
// apiserver's defaults) and the FailedBinding event on a pod whose claim
// name someone else took.
func TestEphemeralVolumeControllerAsKube(t *testing.T) {
	// controllermanagertest sets KUBECONFIG: not parallel.
	kube := startKubeAPIServer(t)
	kcmConfig := kube.kubeconfig(t, "ephemeral-oracle", "system:masters")
	kubeClient := newClient(t, kcmConfig)
	launch(t, "kube-controller-manager", oracle.Path(t, "kube-controller-manager"),
		"--kubeconfig="+kcmConfig, "--authentication-kubeconfig="+kcmConfig, "--authorization-kubeconfig="+kcmConfig,
		"--controllers=ephemeral-volume-controller", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort(t)), "--cert-dir="+t.TempDir(), "-v=4")
	ours := controllermanagertest.Start(t, []string{"ephemeral-volume"}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters := []struct {
		name string
		c    *client.Client
	}{{"kube", kubeClient}, {"minik8s", ours.Client}}

	volume := func(name, tmpl string) api.Volume {
		return api.Volume{Name: name, VolumeSource: api.VolumeSource{Ephemeral: json.RawMessage(`{"volumeClaimTemplate":` + tmpl + `}`)}}
	}
	pod := func(name string, vols ...api.Volume) *api.Pod {
		no := false
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"}, Spec: api.PodSpec{
			AutomountServiceAccountToken: &no, Volumes: vols,
			Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
		for _, v := range vols {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, api.VolumeMount{Name: v.Name, MountPath: "/" + v.Name})
		}
		return p
	}
	pods := []*api.Pod{
		pod("db",
			volume("scratch", `{"metadata":{"labels":{"app":"db"},"annotations":{"note":"x"}},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast","resources":{"requests":{"storage":"1Gi"}}}}`),
			volume("cache", `{"spec":{"accessModes":["ReadWriteOncePod"],"volumeMode":"Filesystem","resources":{"requests":{"storage":"100Mi"}}}}`)),
		pod("web", volume("scratch", `{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)),
	}
	taken := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "web-scratch", Namespace: "default"}, Spec: api.PersistentVolumeClaimSpec{
		AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
		Resources:   api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}}}}

	type result struct {
		claims map[string]string
		events []string
	}
	results := map[string]result{}
	for _, cl := range clusters {
		if _, err := client.Resource[api.ServiceAccount](cl.c).Namespace("default").Create(ctx, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: %v", cl.name, err)
		}
		claims := client.Resource[api.PersistentVolumeClaim](cl.c).Namespace("default")
		if _, err := claims.Create(ctx, api.DeepCopy(taken)); err != nil {
			t.Fatalf("%s: %v", cl.name, err)
		}
		uids := map[string]api.UID{}
		for _, p := range pods {
			out, err := client.Resource[api.Pod](cl.c).Namespace("default").Create(ctx, api.DeepCopy(p))
			if err != nil {
				t.Fatalf("%s: create pod %s: %v", cl.name, p.Name, err)
			}
			uids[p.Name] = out.UID
		}
		res := result{claims: map[string]string{}}
		waitFor(ctx, t, cl.name+": the claims and the event", func() (bool, string) {
			list, err := claims.List(ctx, client.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, c := range list.Items {
				res.claims[c.Name] = describeClaim(&c, uids)
			}
			evs, err := client.Resource[api.Event](cl.c).Namespace("default").List(ctx, client.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			res.events = nil
			for _, e := range evs.Items {
				res.events = append(res.events, fmt.Sprintf("%s %s/%s %s %s %q", e.Source.Component, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Type, e.Reason, e.Message))
			}
			slices.Sort(res.events)
			res.events = slices.Compact(res.events)
			return len(res.claims) == 3 && len(res.events) > 0, fmt.Sprintf("claims %v, events %q", slices.Sorted(maps.Keys(res.claims)), res.events)
		})
		results[cl.name] = res
	}
	k, o := results["kube"], results["minik8s"]
	for _, name := range slices.Sorted(maps.Keys(k.claims)) {
		if k.claims[name] != o.claims[name] {
			t.Errorf("claim %s:\n kube:    %s\n minik8s: %s", name, k.claims[name], o.claims[name])
		}
	}
	if len(o.claims) != len(k.claims) {
		t.Errorf("claims: kube %v, minik8s %v", slices.Sorted(maps.Keys(k.claims)), slices.Sorted(maps.Keys(o.claims)))
	}
	if !slices.Equal(k.events, o.events) {
		t.Errorf("events:\n kube:    %q\n minik8s: %q", k.events, o.events)
	}
	t.Logf("kube's claim db-scratch: %s; its event: %q", k.claims["db-scratch"], k.events)
}

// describeClaim renders what the ephemeral volume controller decides of a
// claim, the owner's UID named by its pod.
func describeClaim(c *api.PersistentVolumeClaim, uids map[string]api.UID) string {
	var owners []string
	for _, r := range c.OwnerReferences {
		pod := "?"
		for name, uid := range uids {
			if uid == r.UID {
				pod = name
			}
		}
		owners = append(owners, fmt.Sprintf("%s/%s %s uid-of:%s controller=%v block=%v", r.APIVersion, r.Kind, r.Name, pod, derefAny(r.Controller), derefAny(r.BlockOwnerDeletion)))
	}
	spec, _ := json.Marshal(c.Spec)
	return fmt.Sprintf("labels=%v annotations=%v owners=%q finalizers=%v spec=%s", c.Labels, c.Annotations, owners, c.Finalizers, spec)
}

func derefAny[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
