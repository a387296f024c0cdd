package pods

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/kubelet/volume"
)

// localVolumePlugin is the directory under a pod's plugins directory
// where the ownership marker of a local volume lives, as kube names the
// plugin.
const localVolumePlugin = "kubernetes.io~local-volume"

// claimedVolume is a persistentVolumeClaim or generic ephemeral volume
// resolved to the PersistentVolume bound to its claim.
type claimedVolume struct {
	pv       *api.PersistentVolume
	readOnly bool
}

// mountWaitError is a pod some of whose volumes could not be processed (a
// claim missing, unbound, being deleted, its volume missing): kube's
// volume manager gives up waiting for them with this message, and the
// kubelet records it as FailedMount "Unable to attach or mount volumes".
type mountWaitError struct {
	unmounted []string
	errs      []string
}

func (e *mountWaitError) Error() string {
	// Claims and local or hostPath volumes attach nothing: no volume is
	// ever reported unattached.
	return fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=%v, unattached volumes=[], failed to process volumes=%v: %s",
		e.unmounted, e.unmounted, strings.Join(e.errs, "; "))
}

// usedVolumes are the names of the volumes some container of the pod
// mounts or maps: kube's volume manager resolves no claim of a volume no
// container uses.
func usedVolumes(pod *api.Pod) map[string]bool {
	used := map[string]bool{}
	add := func(cs []api.Container) {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				used[m.Name] = true
			}
			for _, d := range c.VolumeDevices {
				used[d.Name] = true
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return used
}

// resolveClaims resolves every used persistentVolumeClaim and generic
// ephemeral volume of the pod to its bound volume, as kube's desired-state
// populator does; the volumes it could not resolve make a *mountWaitError.
func (m *Manager) resolveClaims(ctx context.Context, pod *api.Pod) (map[string]claimedVolume, error) {
	used := usedVolumes(pod)
	out := map[string]claimedVolume{}
	werr := &mountWaitError{}
	for _, v := range pod.Spec.Volumes {
		if name, _ := storagevolume.PodVolumeClaimName(pod, &v); name == "" || !used[v.Name] {
			continue
		}
		cv, err := m.resolveClaim(ctx, pod, v)
		if err != nil {
			werr.unmounted = append(werr.unmounted, v.Name)
			werr.errs = append(werr.errs, err.Error())
			continue
		}
		out[v.Name] = cv
	}
	if len(werr.unmounted) > 0 {
		slices.Sort(werr.unmounted)
		return nil, werr
	}
	return out, nil
}

// resolveClaim finds the volume bound to the claim of v, with kube's
// checks and messages (createVolumeSpec, getPVCExtractPV, getPVSpec). The
// claim of an ephemeral volume (POD-VOLUME, made by the ephemeral volume
// controller) is used as a persistentVolumeClaim's, once it is known to
// be the pod's own: a claim of that name someone else made is refused.
func (m *Manager) resolveClaim(ctx context.Context, pod *api.Pod, v api.Volume) (claimedVolume, error) {
	name, ephemeral := storagevolume.PodVolumeClaimName(pod, &v)
	fail := func(err error) (claimedVolume, error) {
		return claimedVolume{}, fmt.Errorf("error processing PVC %s/%s: %v", pod.Namespace, name, err)
	}
	pvc, err := client.Resource[api.PersistentVolumeClaim](m.client).Namespace(pod.Namespace).Get(ctx, name)
	if err != nil {
		return fail(fmt.Errorf("failed to fetch PVC from API server: %v", err))
	}
	// A claim being deleted without the protection finalizer would be
	// gone under the pod; one the finalizer holds stays until the pod ends.
	if pvc.DeletionTimestamp != nil && !slices.Contains(pvc.Finalizers, api.PVCProtectionFinalizer) {
		return fail(errors.New("PVC is being deleted"))
	}
	if pvc.Status.Phase != api.ClaimBound {
		return fail(errors.New("PVC is not bound"))
	}
	if pvc.Spec.VolumeName == "" {
		return fail(errors.New("PVC has empty pvc.Spec.VolumeName"))
	}
	if ephemeral {
		if err := storagevolume.VolumeIsForPod(pod, pvc); err != nil {
			return claimedVolume{}, err
		}
	}
	pv, err := client.Resource[api.PersistentVolume](m.client).Get(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return fail(fmt.Errorf("failed to fetch PV %s from API server: %v", pvc.Spec.VolumeName, err))
	}
	if pv.Spec.ClaimRef == nil {
		return fail(fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pv.Name))
	}
	if pv.Spec.ClaimRef.UID != pvc.UID {
		return fail(fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pv.Name, pv.Spec.ClaimRef.UID, pvc.UID))
	}
	mode := api.PersistentVolumeFilesystem
	if pv.Spec.VolumeMode != nil {
		mode = *pv.Spec.VolumeMode
	}
	if mode != api.PersistentVolumeFilesystem {
		return claimedVolume{}, fmt.Errorf("volume %s has volumeMode %s, but is specified in volumeMounts", v.Name, mode)
	}
	// An ephemeral volume has no readOnly of its own.
	return claimedVolume{pv: pv, readOnly: v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly}, nil
}

// pvSetUpError is a volume of a claim that could not be set up, named by
// its PersistentVolume as kube's operation generator names it.
type pvSetUpError struct {
	step, pv string
	err      error
}

func (e *pvSetUpError) Error() string {
	return fmt.Sprintf("%s for volume %q : %v", e.step, e.pv, e.err)
}

func (e *pvSetUpError) Unwrap() error { return e.err }

// setUpClaimedVolume makes the volume of a claim ready on this node and
// returns its host directory, as kube's mount operation does: the
// volume's node affinity must admit this node, then the hostPath or local
// plugin sets it up. Both are used in place (the runtime bind-mounts the
// directory), so removing the pod's directory never reaches their files.
// A local volume is given to the pod's fsGroup (unless read-only) once
// per pod; a hostPath one never is, as in kube.
func (m *Manager) setUpClaimedVolume(ctx context.Context, pod *api.Pod, name string, cv claimedVolume) (string, error) {
	pv := cv.pv
	if pv.Spec.NodeAffinity != nil {
		node := m.node()
		if node == nil {
			node = m.readNode(ctx)
		}
		if node == nil {
			return "", &pvSetUpError{"MountVolume.NodeAffinity check failed", pv.Name, fmt.Errorf("node %q not found", m.opts.NodeName)}
		}
		if err := storagevolume.CheckNodeAffinity(pv, node.Labels); err != nil {
			return "", &pvSetUpError{"MountVolume.NodeAffinity check failed", pv.Name, err}
		}
	}
	switch src := pv.Spec.PersistentVolumeSource; {
	case src.HostPath != nil:
		p, err := setUpHostPath(src.HostPath)
		if err != nil {
			return "", &pvSetUpError{"MountVolume.SetUp failed", pv.Name, err}
		}
		return p, nil
	case src.Local != nil:
		p := src.Local.Path
		if p == "" {
			return "", &pvSetUpError{"MountVolume.NewMounter initialization failed", pv.Name, errors.New("local volume source is nil or local path is not set")}
		}
		st, err := os.Stat(p)
		if os.IsNotExist(err) {
			return "", &pvSetUpError{"MountVolume.NewMounter initialization failed", pv.Name, fmt.Errorf("path %q does not exist", p)}
		}
		if err != nil {
			return "", &pvSetUpError{"MountVolume.NewMounter initialization failed", pv.Name, err}
		}
		if !st.IsDir() {
			return "", &pvSetUpError{"MountVolume.NewMounter initialization failed", pv.Name, errors.New("only directory and block device are supported")}
		}
		if hasBackstep(p) {
			return "", &pvSetUpError{"MountVolume.SetUp failed", pv.Name, fmt.Errorf("invalid path: %s must not contain '..'", p)}
		}
		if !cv.readOnly {
			if err := m.ownOnce(pod, localVolumePlugin, name, p); err != nil {
				return "", &pvSetUpError{"MountVolume.SetUp failed", pv.Name, err}
			}
		}
		return p, nil
	default:
		return "", &pvSetUpError{"MountVolume.FindPluginBySpec failed", pv.Name, errors.New("no volume plugin matched")}
	}
}

// ownOnce gives the volume at p to the pod's fsGroup the first time the
// pod mounts it (a marker under the pod's plugins directory records it),
// as kube changes a local volume's ownership at its first mount only.
func (m *Manager) ownOnce(pod *api.Pod, plugin, name, p string) error {
	group := fsGroup(pod)
	if group == nil {
		return nil
	}
	ready := filepath.Join(m.podDir(string(pod.UID)), "plugins", plugin, name, "owned")
	if _, err := os.Stat(ready); err == nil {
		return nil
	}
	var policy *string
	if sc := pod.Spec.SecurityContext; sc != nil {
		policy = sc.FSGroupChangePolicy
	}
	if err := volume.SetVolumeOwnership(p, group, policy, false); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(ready), 0o750); err != nil {
		return err
	}
	return os.WriteFile(ready, nil, 0o600)
}

// hasBackstep: a ".." element in the path (kube's ValidatePathNoBacksteps).
func hasBackstep(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

// setUpHostPath checks (or creates) a hostPath volume's path by its type,
// as kube's hostPath plugin does, and returns it.
func setUpHostPath(src *api.HostPathVolumeSource) (string, error) {
	p := src.Path
	if hasBackstep(p) {
		return "", fmt.Errorf("invalid HostPath `%s`: must not contain '..'", p)
	}
	t := api.HostPathUnset
	if src.Type != nil {
		t = *src.Type
	}
	switch t {
	case api.HostPathDirectoryOrCreate:
		if err := os.MkdirAll(p, 0o755); err != nil {
			return "", err
		}
	case api.HostPathFileOrCreate:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return "", err
		}
		f.Close()
	case api.HostPathDirectory, api.HostPathFile:
		st, err := os.Stat(p)
		if err != nil || st.IsDir() != (t == api.HostPathDirectory) {
			return "", fmt.Errorf("hostPath type check failed: %s is not a %s", p, strings.ToLower(string(t)))
		}
	}
	return p, nil
}
