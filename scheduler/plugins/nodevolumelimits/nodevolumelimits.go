package nodevolumelimits

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeVolumeLimits"

// ErrReasonMaxVolumeCountExceeded is kube's reason for a node whose
// driver limit the pod would exceed.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

// Listers are the informer caches the plugin reads.
type Listers struct {
	Claims      icache.Lister[api.PersistentVolumeClaim]
	Volumes     icache.Lister[api.PersistentVolume]
	Classes     icache.Lister[api.StorageClass]
	CSINodes    icache.Lister[api.CSINode]
	Attachments icache.Lister[api.VolumeAttachment]
	// CSIDrivers serve kube v1.37's VolumeLimitScaling (beta, on by
	// default): a driver whose CSIDriver says preventPodSchedulingIfMissing
	// keeps pods off nodes whose CSINode does not list it.
	CSIDrivers icache.Lister[api.CSIDriver]
}

// Plugin is the NodeVolumeLimits plugin.
type Plugin struct {
	l   Listers
	log *slog.Logger
	// randomPrefix makes the handles of unbound claims unlike any real
	// volume handle, as kube's randomVolumeIDPrefix.
	randomPrefix string
}

var (
	_ framework.PreFilterPlugin = (*Plugin)(nil)
	_ framework.FilterPlugin    = (*Plugin)(nil)
)

// New returns the plugin over the listers (nil log: slog.Default()).
func New(l Listers, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.Default()
	}
	return &Plugin{l: l, log: log, randomPrefix: rand.Text()}
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// usesClaim reports whether v can be a CSI volume: a claim or a generic
// ephemeral volume (there are no migratable in-tree inline volumes).
func usesClaim(v *api.Volume) bool {
	return v.PersistentVolumeClaim != nil || storagevolume.IsEphemeral(v)
}

// PreFilter implements framework.PreFilterPlugin: pods without a claim
// or an ephemeral volume skip the filter.
func (pl *Plugin) PreFilter(_ context.Context, _ *framework.CycleState, pod *api.Pod) *framework.Status {
	for i := range pod.Spec.Volumes {
		if usesClaim(&pod.Spec.Volumes[i]) {
			return nil
		}
	}
	return framework.NewStatus(framework.Skip)
}

// Filter implements framework.FilterPlugin.
func (pl *Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, ni *framework.NodeInfo) *framework.Status {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	node := ni.Node()
	csiNode, err := pl.l.CSINodes.Get(node.Name)
	if err != nil {
		pl.log.Debug("could not get the CSINode of the node", "node", node.Name, "err", err)
	}
	newVolumes := map[string]string{}
	if err := pl.attachableVolumes(pod, true, newVolumes); err != nil {
		if nf := (*notFoundError)(nil); errors.As(err, &nf) {
			// The pod cannot run until its claim exists.
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		return framework.AsStatus(err)
	}
	if len(newVolumes) == 0 {
		return nil
	}
	for _, driver := range newVolumes {
		installed, err := pl.driverOnNode(driver, csiNode)
		if err != nil {
			return framework.AsStatus(err)
		}
		if !installed {
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("%s CSI driver is not installed on the node", driver))
		}
	}
	limits := volumeLimits(csiNode)
	if len(limits) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, pi := range ni.Pods {
		if err := pl.attachableVolumes(pi.Pod, false, attached); err != nil {
			return framework.AsStatus(err)
		}
	}
	attachedCount := map[string]int{}
	for unique, driver := range attached {
		// A volume the node holds already is not new.
		delete(newVolumes, unique)
		attachedCount[driver]++
	}
	for unique, driver := range pl.nodeAttachments(node.Name) {
		if _, ok := attached[unique]; !ok {
			attachedCount[driver]++
		}
	}
	newCount := map[string]int{}
	for _, driver := range newVolumes {
		newCount[driver]++
	}
	for driver, n := range newCount {
		limit, ok := limits[driver]
		if !ok {
			continue
		}
		pl.log.Debug("found driver volume limit", "node", node.Name, "driver", driver, "limit", limit,
			"current", attachedCount[driver], "new", n, "pod", pod.Namespace+"/"+pod.Name)
		if attachedCount[driver]+n > int(limit) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// driverOnNode is kube's checkCSIDriverOnNode: false only for a driver
// whose CSIDriver opts in with preventPodSchedulingIfMissing and that the
// node's CSINode (if any) does not list. A driver without a CSIDriver
// object may not be CSI at all and is let through.
func (pl *Plugin) driverOnNode(driver string, csiNode *api.CSINode) (bool, error) {
	d, err := pl.l.CSIDrivers.Get(driver)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("error getting CSIDriver for provider %s: %w", driver, err)
	}
	if d.Spec.PreventPodSchedulingIfMissing == nil || !*d.Spec.PreventPodSchedulingIfMissing {
		return true, nil
	}
	if csiNode == nil {
		return false, nil
	}
	for _, nd := range csiNode.Spec.Drivers {
		if nd.Name == driver {
			return true, nil
		}
	}
	return false, nil
}

// notFoundError is kube's lister NotFound for a claim.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// attachableVolumes adds the pod's CSI volumes to result, keyed by
// "driver/handle", valued by driver. For a new pod a missing claim is an
// error (a *notFoundError when it does not exist); an existing pod's
// missing claim is not counted.
func (pl *Plugin) attachableVolumes(pod *api.Pod, newPod bool, result map[string]string) error {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		name, ephemeral := storagevolume.PodVolumeClaimName(pod, v)
		if !usesClaim(v) {
			continue
		}
		if name == "" {
			return fmt.Errorf("PersistentVolumeClaim had no name")
		}
		pvc, err := pl.l.Claims.Namespace(pod.Namespace).Get(name)
		if err != nil {
			if newPod {
				if apierrors.IsNotFound(err) {
					return &notFoundError{fmt.Sprintf("looking up PVC %s/%s: persistentvolumeclaim %q not found", pod.Namespace, name, name)}
				}
				return fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, name, err)
			}
			pl.log.Debug("unable to look up the claim", "pod", pod.Namespace+"/"+pod.Name, "claim", name)
			continue
		}
		if ephemeral {
			if err := storagevolume.VolumeIsForPod(pod, pvc); err != nil {
				return err
			}
		}
		driver, handle := pl.driverInfo(pvc)
		if driver == "" || handle == "" {
			continue
		}
		result[driver+"/"+handle] = driver
	}
	return nil
}

// csiSource is the part of a PersistentVolume's spec.csi the plugin reads.
type csiSource struct {
	Driver       string `json:"driver"`
	VolumeHandle string `json:"volumeHandle"`
}

func pvCSI(pv *api.PersistentVolume) (csiSource, bool) {
	var src csiSource
	if len(pv.Spec.CSI) == 0 || string(pv.Spec.CSI) == "null" {
		return src, false
	}
	if err := json.Unmarshal(pv.Spec.CSI, &src); err != nil {
		return src, false
	}
	return src, true
}

// driverInfo is the driver and handle of the claim's volume: its PV's
// spec.csi, or for a claim not bound (or bound to a missing PV) its
// class's provisioner and a handle of its own.
func (pl *Plugin) driverInfo(pvc *api.PersistentVolumeClaim) (string, string) {
	if pvc.Spec.VolumeName == "" {
		return pl.driverInfoFromClass(pvc)
	}
	pv, err := pl.l.Volumes.Get(pvc.Spec.VolumeName)
	if err != nil {
		pl.log.Debug("unable to look up the claim's volume", "claim", pvc.Namespace+"/"+pvc.Name, "volume", pvc.Spec.VolumeName)
		return pl.driverInfoFromClass(pvc)
	}
	src, ok := pvCSI(pv)
	if !ok {
		return "", ""
	}
	return src.Driver, src.VolumeHandle
}

func (pl *Plugin) driverInfoFromClass(pvc *api.PersistentVolumeClaim) (string, string) {
	className := storagevolume.ClaimClass(pvc)
	if className == "" {
		return "", ""
	}
	class, err := pl.l.Classes.Get(className)
	if err != nil {
		pl.log.Debug("could not get the claim's StorageClass", "claim", pvc.Namespace+"/"+pvc.Name, "err", err)
		return "", ""
	}
	return class.Provisioner, fmt.Sprintf("%s-%s/%s", pl.randomPrefix, pvc.Namespace, pvc.Name)
}

// nodeAttachments are the CSI volumes VolumeAttachments attach to the node.
func (pl *Plugin) nodeAttachments(node string) map[string]string {
	out := map[string]string{}
	for _, va := range pl.l.Attachments.List(nil) {
		if va.Spec.NodeName != node || va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv, err := pl.l.Volumes.Get(*va.Spec.Source.PersistentVolumeName)
		if err != nil {
			continue
		}
		src, ok := pvCSI(pv)
		if !ok {
			continue
		}
		out[va.Spec.Attacher+"/"+src.VolumeHandle] = va.Spec.Attacher
	}
	return out
}

// volumeLimits maps each driver with an allocatable count to it; a driver
// not in the map has no limit.
func volumeLimits(csiNode *api.CSINode) map[string]int64 {
	out := map[string]int64{}
	if csiNode == nil {
		return out
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			out[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	return out
}

// CSINodeUpdateQueues is kube's queueing hint for a CSINode update: it
// can make a pod fit only when a driver's count grew.
func CSINodeUpdateQueues(old, cur *api.CSINode) bool {
	before := map[string]int32{}
	for _, d := range old.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			before[d.Name] = *d.Allocatable.Count
		}
	}
	for _, d := range cur.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil && *d.Allocatable.Count > before[d.Name] {
			return true
		}
	}
	return false
}
