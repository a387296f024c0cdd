package volumezone

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "VolumeZone"

// ErrReasonConflict is kube's reason for a node outside the volumes' zones.
const ErrReasonConflict = "node(s) had no available volume zone"

const stateKey framework.StateKey = "PreFilter" + Name

// The topology labels, deprecated beta ones first, as kube lists them.
const (
	labelBetaZone   = "failure-domain.beta.kubernetes.io/zone"
	labelBetaRegion = "failure-domain.beta.kubernetes.io/region"
)

var topologyLabels = []string{labelBetaZone, labelBetaRegion, api.LabelTopologyZone, api.LabelTopologyRegion}

// multiZoneDelimiter separates the zones of one label value ("a__b").
const multiZoneDelimiter = "__"

func toGA(label string) string {
	switch label {
	case labelBetaRegion:
		return api.LabelTopologyRegion
	case labelBetaZone:
		return api.LabelTopologyZone
	}
	return label
}

// pvTopology is one topology label of a volume: its key and zones.
type pvTopology struct {
	key    string
	values map[string]bool
}

type stateData struct{ topologies []pvTopology }

// Listers are the informer caches the plugin reads.
type Listers struct {
	Claims  icache.Lister[api.PersistentVolumeClaim]
	Volumes icache.Lister[api.PersistentVolume]
	Classes icache.Lister[api.StorageClass]
}

// Plugin is the VolumeZone plugin.
type Plugin struct{ l Listers }

var (
	_ framework.PreFilterPlugin = (*Plugin)(nil)
	_ framework.FilterPlugin    = (*Plugin)(nil)
)

// New returns the plugin over the listers.
func New(l Listers) *Plugin { return &Plugin{l: l} }

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// notFound is kube's lister NotFound message (the resource in the
// singular) as an unresolvable status.
func notFound(resource, name string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("%s %q not found", resource, name))
}

func asStatus(err error, resource, name string) *framework.Status {
	if apierrors.IsNotFound(err) {
		return notFound(resource, name)
	}
	return framework.AsStatus(err)
}

// PreFilter implements framework.PreFilterPlugin: the topologies of the
// pod's bound volumes (WaitForFirstConsumer claims not bound yet have
// none); pods without any skip the filter.
func (pl *Plugin) PreFilter(_ context.Context, state *framework.CycleState, pod *api.Pod) *framework.Status {
	var tops []pvTopology
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		if name == "" {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
		}
		pvc, err := pl.l.Claims.Namespace(pod.Namespace).Get(name)
		if err != nil {
			return asStatus(err, "persistentvolumeclaim", name)
		}
		if pvc.Spec.VolumeName == "" {
			className := storagevolume.ClaimClass(pvc)
			if className == "" {
				return framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
			}
			class, err := pl.l.Classes.Get(className)
			if err != nil {
				return asStatus(err, "storageclass.storage.k8s.io", className)
			}
			if class.VolumeBindingMode == nil {
				return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", className))
			}
			if *class.VolumeBindingMode == api.VolumeBindingWaitForFirstConsumer {
				continue // VolumeBinding places it
			}
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolume had no name")
		}
		pv, err := pl.l.Volumes.Get(pvc.Spec.VolumeName)
		if err != nil {
			return asStatus(err, "persistentvolume", pvc.Spec.VolumeName)
		}
		tops = append(tops, topologiesOf(pv)...)
	}
	if len(tops) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, &stateData{topologies: tops})
	return nil
}

// topologiesOf lists the volume's topology labels; a value with an empty
// zone ("a__") is skipped, as kube does.
func topologiesOf(pv *api.PersistentVolume) []pvTopology {
	var out []pvTopology
	for _, key := range topologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zones := map[string]bool{}
		valid := true
		for _, z := range strings.Split(value, multiZoneDelimiter) {
			z = strings.TrimSpace(z)
			if z == "" {
				valid = false
				break
			}
			zones[z] = true
		}
		if valid {
			out = append(out, pvTopology{key: key, values: zones})
		}
	}
	return out
}

// Filter implements framework.FilterPlugin: a node with no topology label
// fits; otherwise it must carry, for each of the volumes' topology labels
// (or its GA twin), one of the label's zones.
func (pl *Plugin) Filter(_ context.Context, state *framework.CycleState, _ *api.Pod, ni *framework.NodeInfo) *framework.Status {
	v, ok := state.Read(stateKey)
	if !ok {
		return framework.AsStatus(errors.New(`reading "PreFilterVolumeZone" from cycleState: not found`))
	}
	s := v.(*stateData)
	node := ni.Node()
	constrained := false
	for _, l := range topologyLabels {
		if _, ok := node.Labels[l]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for _, t := range s.topologies {
		v, ok := node.Labels[t.key]
		if !ok {
			v, ok = node.Labels[toGA(t.key)]
		}
		if !ok || !t.values[v] {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}
