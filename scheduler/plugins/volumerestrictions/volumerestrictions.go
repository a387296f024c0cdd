package volumerestrictions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "VolumeRestrictions"

// Reasons a node does not fit, as kube's.
const (
	ErrReasonDiskConflict             = "node(s) had no available disk"
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

const stateKey framework.StateKey = "PreFilter" + Name

// preFilterState counts the uses, by pods already placed, of the pod's
// ReadWriteOncePod claims.
type preFilterState struct {
	rwopClaims  map[string]bool
	conflicting int
}

// Clone implements framework.Cloner (preemption's what-ifs change the count).
func (s *preFilterState) Clone() any {
	c := *s
	return &c
}

func (s *preFilterState) conflictsOf(p *api.Pod) int {
	n := 0
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && s.rwopClaims[v.PersistentVolumeClaim.ClaimName] {
			n++
		}
	}
	return n
}

// Plugin is the VolumeRestrictions plugin.
type Plugin struct {
	claims icache.Lister[api.PersistentVolumeClaim]
	h      framework.Handle
}

var (
	_ framework.PreFilterPlugin     = (*Plugin)(nil)
	_ framework.PreFilterExtensions = (*Plugin)(nil)
	_ framework.FilterPlugin        = (*Plugin)(nil)
)

// New returns the plugin reading claims from the lister and the placed
// pods from h's snapshot.
func New(claims icache.Lister[api.PersistentVolumeClaim], h framework.Handle) *Plugin {
	return &Plugin{claims: claims, h: h}
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// PreFilter implements framework.PreFilterPlugin: a missing claim rejects
// the pod; pods without ReadWriteOncePod claims in use or in-tree disks
// skip the filter.
func (pl *Plugin) PreFilter(_ context.Context, state *framework.CycleState, pod *api.Pod) *framework.Status {
	needsCheck := slices.ContainsFunc(pod.Spec.Volumes, needsRestrictionsCheck)
	s := &preFilterState{rwopClaims: map[string]bool{}}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := pl.claims.Namespace(pod.Namespace).Get(v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			if apierrors.IsNotFound(err) {
				// kube's lister names the resource in the singular.
				return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", v.PersistentVolumeClaim.ClaimName))
			}
			return framework.AsStatus(err)
		}
		if slices.Contains(pvc.Spec.AccessModes, api.ReadWriteOncePod) {
			s.rwopClaims[pvc.Name] = true
		}
	}
	if len(s.rwopClaims) > 0 {
		for _, ni := range pl.h.SnapshotSharedLister().List() {
			for _, pi := range ni.Pods {
				if pi.Pod.Namespace == pod.Namespace && pi.Pod.UID != pod.UID {
					s.conflicting += s.conflictsOf(pi.Pod)
				}
			}
		}
	}
	if !needsCheck && s.conflicting == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, s)
	return nil
}

// AddPod implements framework.PreFilterExtensions.
func (pl *Plugin) AddPod(_ context.Context, state *framework.CycleState, _ *api.Pod, add *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := getState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.conflicting += s.conflictsOf(add.Pod)
	return nil
}

// RemovePod implements framework.PreFilterExtensions.
func (pl *Plugin) RemovePod(_ context.Context, state *framework.CycleState, _ *api.Pod, remove *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := getState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.conflicting -= s.conflictsOf(remove.Pod)
	return nil
}

func getState(state *framework.CycleState) (*preFilterState, error) {
	v, ok := state.Read(stateKey)
	if !ok {
		return nil, fmt.Errorf("cannot read %q from cycleState", stateKey)
	}
	s, ok := v.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to volumerestrictions.state error", v)
	}
	return s, nil
}

// Filter implements framework.FilterPlugin.
func (pl *Plugin) Filter(_ context.Context, state *framework.CycleState, pod *api.Pod, ni *framework.NodeInfo) *framework.Status {
	if !satisfyVolumeConflicts(pod, ni) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict)
	}
	s, err := getState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.conflicting > 0 {
		return framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)
	}
	return nil
}

// disk is what identifies an in-tree disk of a volume (the fields of
// gcePersistentDisk, awsElasticBlockStore, rbd and iscsi that count).
type disk struct {
	PDName       string   `json:"pdName"`
	VolumeID     string   `json:"volumeID"`
	IQN          string   `json:"iqn"`
	CephMonitors []string `json:"monitors"`
	RBDPool      string   `json:"pool"`
	RBDImage     string   `json:"image"`
	ReadOnly     bool     `json:"readOnly"`
}

func needsRestrictionsCheck(v api.Volume) bool {
	return len(v.GCEPersistentDisk) > 0 || len(v.AWSElasticBlockStore) > 0 || len(v.RBD) > 0 || len(v.ISCSI) > 0
}

func decode(raw json.RawMessage) *disk {
	if len(raw) == 0 {
		return nil
	}
	var d disk
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil
	}
	if d.RBDPool == "" && len(d.CephMonitors) > 0 {
		d.RBDPool = "rbd" // the API's default pool
	}
	return &d
}

// isVolumeConflict is kube's: the same GCE disk unless both read-only, the
// same EBS volume, the same iSCSI IQN or RBD image unless both read-only.
func isVolumeConflict(v *api.Volume, existing *api.Pod) bool {
	a := struct{ gce, ebs, iscsi, rbd *disk }{decode(v.GCEPersistentDisk), decode(v.AWSElasticBlockStore), decode(v.ISCSI), decode(v.RBD)}
	for _, ev := range existing.Spec.Volumes {
		if a.gce != nil {
			if b := decode(ev.GCEPersistentDisk); b != nil && a.gce.PDName == b.PDName && !(a.gce.ReadOnly && b.ReadOnly) {
				return true
			}
		}
		if a.ebs != nil {
			if b := decode(ev.AWSElasticBlockStore); b != nil && a.ebs.VolumeID == b.VolumeID {
				return true
			}
		}
		if a.iscsi != nil {
			if b := decode(ev.ISCSI); b != nil && a.iscsi.IQN == b.IQN && !(a.iscsi.ReadOnly && b.ReadOnly) {
				return true
			}
		}
		if a.rbd != nil {
			if b := decode(ev.RBD); b != nil && haveOverlap(a.rbd.CephMonitors, b.CephMonitors) && a.rbd.RBDPool == b.RBDPool && a.rbd.RBDImage == b.RBDImage && !(a.rbd.ReadOnly && b.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func satisfyVolumeConflicts(pod *api.Pod, ni *framework.NodeInfo) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(*v) {
			continue
		}
		for _, pi := range ni.Pods {
			if isVolumeConflict(v, pi.Pod) {
				return false
			}
		}
	}
	return true
}
