package realcomponents

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
)

// TestPersistentVolumeControllerAsKube runs the real
// kube-controller-manager's persistentvolume-binder, pvc-protection and
// pv-protection against kube-apiserver, and ours against our apiserver,
// on the same volumes, claims and classes, and compares what each made of
// them: the claims' phases, volumes, annotations and capacity; the
// volumes' phases, claimRefs and annotations, after binding (best match,
// pre-bound both ways, an external provisioner's class) and after the
// claims of a Retain, an undeletable Delete and an externally provisioned
// Delete volume are deleted, and once a bound volume is gone (Lost); and
// the controllers' events.
func TestPersistentVolumeControllerAsKube(t *testing.T) {
	// controllermanagertest sets KUBECONFIG: not parallel.
	kube := startKubeAPIServer(t)
	kcmConfig := kube.kubeconfig(t, "pv-oracle", "system:masters")
	kubeClient := newClient(t, kcmConfig)
	launch(t, "kube-controller-manager", oracle.Path(t, "kube-controller-manager"),
		"--kubeconfig="+kcmConfig, "--authentication-kubeconfig="+kcmConfig, "--authorization-kubeconfig="+kcmConfig,
		"--controllers=persistentvolume-binder,pvc-protection,pv-protection", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort(t)), "--cert-dir="+t.TempDir(), "-v=4")
	ours := controllermanagertest.Start(t, []string{"persistentvolume-binder", "pvc-protection", "pv-protection"}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters := []struct {
		name string
		c    *client.Client
	}{{"kube", kubeClient}, {"minik8s", ours.Client}}

	q := resource.MustParse
	volume := func(name, size, class string, policy api.PersistentVolumeReclaimPolicy, path string, mutate func(*api.PersistentVolume)) *api.PersistentVolume {
		pv := &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.PersistentVolumeSpec{
			Capacity: api.ResourceList{api.ResourceStorage: q(size)}, AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			PersistentVolumeSource:        api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: path}},
			PersistentVolumeReclaimPolicy: policy, StorageClassName: class}}
		if mutate != nil {
			mutate(pv)
		}
		return pv
	}
	str := func(s string) *string { return &s }
	claim := func(name, size string, class *string, mutate func(*api.PersistentVolumeClaim)) *api.PersistentVolumeClaim {
		c := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"}, Spec: api.PersistentVolumeClaimSpec{
			AccessModes:      []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: q(size)}},
			StorageClassName: class}}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	immediate := api.VolumeBindingImmediate
	volumes := []*api.PersistentVolume{
		volume("big", "10Gi", "", api.PersistentVolumeReclaimRetain, "/srv/big", nil),
		volume("small", "2Gi", "", api.PersistentVolumeReclaimRetain, "/srv/small", nil),
		volume("wanted", "1Gi", "", api.PersistentVolumeReclaimRetain, "/srv/wanted", nil),
		volume("tiny", "500Mi", "", api.PersistentVolumeReclaimRetain, "/srv/tiny", nil),
		volume("spare-a", "3Gi", "z", api.PersistentVolumeReclaimRetain, "/srv/spare-a", nil),
		volume("spare-b", "3Gi", "z", api.PersistentVolumeReclaimRetain, "/srv/spare-b", nil),
		volume("reserved", "1Gi", "", api.PersistentVolumeReclaimRetain, "/srv/reserved", func(pv *api.PersistentVolume) {
			pv.Spec.ClaimRef = &api.ObjectReference{Namespace: "default", Name: "owner"}
		}),
		volume("keep", "1Gi", "a", api.PersistentVolumeReclaimRetain, "/srv/keep", nil),
		volume("stuck", "1Gi", "b", api.PersistentVolumeReclaimDelete, "/srv/stuck", nil),
		volume("ext", "1Gi", "c", api.PersistentVolumeReclaimDelete, "/srv/ext", func(pv *api.PersistentVolume) {
			pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": "example.com/ext"}
		}),
	}
	claims := []*api.PersistentVolumeClaim{
		claim("data", "1500Mi", str(""), nil),
		claim("named", "100Mi", str(""), func(c *api.PersistentVolumeClaim) { c.Spec.VolumeName = "wanted" }),
		claim("owner", "1Gi", str(""), nil),
		claim("huge", "100Gi", str(""), nil),
		claim("mismatch", "5Gi", str(""), func(c *api.PersistentVolumeClaim) { c.Spec.VolumeName = "tiny" }),
		claim("keep", "1Gi", str("a"), nil),
		claim("stuck", "1Gi", str("b"), nil),
		claim("ext", "1Gi", str("c"), nil),
		claim("fast", "1Gi", str("fast"), nil),
		claim("no-such-class", "1Gi", str("missing"), nil),
	}
	for _, cl := range clusters {
		if _, err := client.Resource[api.StorageClass](cl.c).Create(ctx, &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "fast"},
			Provisioner: "example.com/fast", VolumeBindingMode: &immediate}); err != nil {
			t.Fatalf("%s: %v", cl.name, err)
		}
		for _, pv := range volumes {
			if _, err := client.Resource[api.PersistentVolume](cl.c).Create(ctx, api.DeepCopy(pv)); err != nil {
				t.Fatalf("%s: %v", cl.name, err)
			}
		}
	}
	// A new volume is Pending until the controller makes it Available,
	// and only Available ones are matched: the claims come once all are,
	// or each controller would bind whichever it saw first.
	waitFor(ctx, t, "the volumes Available", func() (bool, string) {
		for _, cl := range clusters {
			list, err := client.Resource[api.PersistentVolume](cl.c).List(ctx, client.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, v := range list.Items {
				if v.Status.Phase != api.VolumeAvailable {
					return false, cl.name + ": " + v.Name + " " + string(v.Status.Phase)
				}
			}
		}
		return true, ""
	})
	for _, cl := range clusters {
		for _, c := range claims {
			if _, err := client.Resource[api.PersistentVolumeClaim](cl.c).Namespace("default").Create(ctx, api.DeepCopy(c)); err != nil {
				t.Fatalf("%s: %v", cl.name, err)
			}
		}
	}

	// state is what the controllers decide, written the same way for both.
	state := func(c *client.Client) (string, error) {
		var lines []string
		pvcs, err := client.Resource[api.PersistentVolumeClaim](c).Namespace("default").List(ctx, client.ListOptions{})
		if err != nil {
			return "", err
		}
		for _, p := range pvcs.Items {
			size := p.Status.Capacity[api.ResourceStorage]
			lines = append(lines, fmt.Sprintf("claim %s: %s volume=%q capacity=%s modes=%v ann=%v fin=%v deleting=%v", p.Name, p.Status.Phase,
				p.Spec.VolumeName, size.String(), p.Status.AccessModes, sortedMap(p.Annotations), p.Finalizers, p.DeletionTimestamp != nil))
		}
		pvs, err := client.Resource[api.PersistentVolume](c).List(ctx, client.ListOptions{})
		if err != nil {
			return "", err
		}
		for _, v := range pvs.Items {
			ref := ""
			if v.Spec.ClaimRef != nil {
				ref = v.Spec.ClaimRef.Namespace + "/" + v.Spec.ClaimRef.Name
				if v.Spec.ClaimRef.UID != "" {
					ref += "+uid"
				}
			}
			lines = append(lines, fmt.Sprintf("volume %s: %s %q claim=%s ann=%v fin=%v", v.Name, v.Status.Phase, v.Status.Message, ref,
				sortedMap(v.Annotations), v.Finalizers))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n"), nil
	}
	converge := func(what string, done func(s string) bool) {
		t.Helper()
		var got [2]string
		waitFor(ctx, t, what, func() (bool, string) {
			for i, cl := range clusters {
				s, err := state(cl.c)
				if err != nil {
					return false, err.Error()
				}
				got[i] = s
			}
			return got[0] == got[1] && done(got[0]), "kube:\n" + got[0] + "\nminik8s:\n" + got[1]
		})
		t.Logf("%s:\n%s", what, got[0])
	}
	converge("bound", func(s string) bool {
		return strings.Contains(s, `claim data: Bound volume="small"`) && strings.Contains(s, `claim owner: Bound`) &&
			strings.Contains(s, `claim ext: Bound`) && strings.Contains(s, "example.com/fast")
	})
	// Volumes that say they are bound to claims bound elsewhere: the
	// controller's binding (bound-by-controller) is undone, a user's
	// pre-binding keeps the claim's name without its uid.
	for _, cl := range clusters {
		for _, vc := range [][2]string{{"spare-a", "data"}, {"spare-b", "named"}} {
			vol, c := vc[0], vc[1]
			claim, err := client.Resource[api.PersistentVolumeClaim](cl.c).Namespace("default").Get(ctx, c)
			if err != nil {
				t.Fatalf("%s: %v", cl.name, err)
			}
			pvs := client.Resource[api.PersistentVolume](cl.c)
			pv, err := pvs.Get(ctx, vol)
			if err != nil {
				t.Fatalf("%s: %v", cl.name, err)
			}
			pv.Spec.ClaimRef = &api.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: c, UID: claim.UID}
			if vol == "spare-a" {
				pv.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
			}
			if _, err := pvs.Update(ctx, pv); err != nil {
				t.Fatalf("%s: %v", cl.name, err)
			}
		}
	}
	converge("unbound", func(s string) bool {
		return strings.Contains(s, `volume spare-a: Available "" claim= ann=[]`) && strings.Contains(s, `volume spare-b: Available "" claim=default/named ann=[]`)
	})
	for _, cl := range clusters {
		for _, name := range []string{"keep", "stuck", "ext"} {
			if err := client.Resource[api.PersistentVolumeClaim](cl.c).Namespace("default").Delete(ctx, name, nil); err != nil {
				t.Fatalf("%s: %v", cl.name, err)
			}
		}
	}
	converge("reclaimed", func(s string) bool {
		return strings.Contains(s, "volume keep: Released") && strings.Contains(s, "volume stuck: Failed") &&
			strings.Contains(s, "volume ext: Released") && !strings.Contains(s, "claim keep")
	})

	// A bound volume deleted, its protection finalizer taken off by
	// hand: the claim is Lost.
	for _, cl := range clusters {
		pvs := client.Resource[api.PersistentVolume](cl.c)
		if err := pvs.Delete(ctx, "small", nil); err != nil {
			t.Fatalf("%s: %v", cl.name, err)
		}
		waitFor(ctx, t, cl.name+": the finalizer of the deleted volume off", func() (bool, string) {
			pv, err := pvs.Get(ctx, "small")
			if err != nil {
				return false, err.Error()
			}
			pv.Finalizers = nil
			_, err = pvs.Update(ctx, pv)
			return err == nil, fmt.Sprint(err)
		})
	}
	converge("lost", func(s string) bool {
		return strings.Contains(s, "claim data: Lost") && !strings.Contains(s, "volume small")
	})

	// The events: reason and message per object (kube's come as its
	// operations finish: polled until both have the same).
	var events [2][]string
	waitFor(ctx, t, "the same events", func() (bool, string) {
		for i, cl := range clusters {
			list, err := client.Resource[api.Event](cl.c).Namespace("").List(ctx, client.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			seen := map[string]bool{}
			events[i] = nil
			for _, e := range list.Items {
				if e.Source.Component != "persistentvolume-controller" {
					continue
				}
				line := fmt.Sprintf("%s %s %s %s: %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
				if !seen[line] {
					seen[line] = true
					events[i] = append(events[i], line)
				}
			}
			sort.Strings(events[i])
		}
		return slices.Equal(events[0], events[1]) && len(events[0]) >= 6,
			"kube:\n" + strings.Join(events[0], "\n") + "\nminik8s:\n" + strings.Join(events[1], "\n")
	})
	t.Logf("events:\n%s", strings.Join(events[0], "\n"))
}

func sortedMap(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}
