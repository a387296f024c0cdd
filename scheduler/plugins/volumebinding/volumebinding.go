package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "VolumeBinding"

const stateKey framework.StateKey = Name

// stateData is the cycle's state, written by PreFilter; Filter, running
// on many nodes at once, fills podVolumesByNode under the lock.
type stateData struct {
	allBound         bool
	claims           *podVolumeClaims
	mu               sync.Mutex
	podVolumesByNode map[string]*podVolumes
}

// Plugin is the VolumeBinding plugin.
type Plugin struct {
	binder *binder
}

var (
	_ framework.PreFilterPlugin = (*Plugin)(nil)
	_ framework.FilterPlugin    = (*Plugin)(nil)
	_ framework.ReservePlugin   = (*Plugin)(nil)
	_ framework.PreBindPlugin   = (*Plugin)(nil)
)

// New returns the plugin over the informers' listers, writing bindings
// with w. bindTimeout bounds PreBind's wait (DefaultBindTimeout when 0).
func New(l Listers, w Writer, bindTimeout time.Duration, log *slog.Logger) *Plugin {
	if bindTimeout <= 0 {
		bindTimeout = DefaultBindTimeout
	}
	if log == nil {
		log = slog.Default()
	}
	return &Plugin{binder: newBinder(l, w, bindTimeout, log.With("plugin", Name))}
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// podHasPVCs reports whether the pod uses claims, and why it cannot be
// scheduled because of one (missing, lost, being deleted, an ephemeral
// volume's claim not made for it).
func (pl *Plugin) podHasPVCs(pod *api.Pod) (bool, error) {
	has := false
	for i := range pod.Spec.Volumes {
		name, ephemeral := claimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		has = true
		pvc, err := pl.binder.listers.Claims.Namespace(pod.Namespace).Get(name)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				return has, err
			}
			if ephemeral {
				return has, fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			// kube's lister names the resource in the singular.
			return has, fmt.Errorf("persistentvolumeclaim %q not found", name)
		}
		if pvc.Status.Phase == api.ClaimLost {
			return has, fmt.Errorf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		}
		if pvc.DeletionTimestamp != nil {
			return has, fmt.Errorf("persistentvolumeclaim %q is being deleted", pvc.Name)
		}
		if ephemeral {
			if err := volumeIsForPod(pod, pvc); err != nil {
				return has, err
			}
		}
	}
	return has, nil
}

// PreFilter implements framework.PreFilterPlugin.
func (pl *Plugin) PreFilter(_ context.Context, state *framework.CycleState, pod *api.Pod) *framework.Status {
	has, err := pl.podHasPVCs(pod)
	if err != nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	if !has {
		state.Write(stateKey, &stateData{allBound: true})
		return framework.NewStatus(framework.Skip)
	}
	claims, err := pl.binder.getPodVolumeClaims(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(claims.unboundClaimsImmediate) > 0 {
		// The PV controller binds these; the pod is retried when it does.
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	state.Write(stateKey, &stateData{claims: claims, podVolumesByNode: map[string]*podVolumes{}})
	return nil
}

func getStateData(state *framework.CycleState) (*stateData, error) {
	v, ok := state.Read(stateKey)
	if !ok {
		return nil, errors.New(`reading "VolumeBinding" from cycleState: not found`)
	}
	s, ok := v.(*stateData)
	if !ok {
		return nil, errors.New("unable to convert state into stateData")
	}
	return s, nil
}

// Filter implements framework.FilterPlugin: the bound claims' volumes
// must allow the node, and every unbound WaitForFirstConsumer claim must
// find an Available volume there or a class able to provision there.
func (pl *Plugin) Filter(_ context.Context, state *framework.CycleState, pod *api.Pod, ni *framework.NodeInfo) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := ni.Node()
	pv, reasons, err := pl.binder.findPodVolumes(pod, s.claims, node)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(reasons) > 0 {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
	}
	s.mu.Lock()
	s.podVolumesByNode[node.Name] = pv
	s.mu.Unlock()
	return nil
}

// Reserve implements framework.ReservePlugin: the node's bindings are
// assumed in the plugin's caches.
func (pl *Plugin) Reserve(_ context.Context, state *framework.CycleState, pod *api.Pod, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	pv, ok := s.podVolumesByNode[nodeName]
	if !ok {
		s.allBound = true // the pod has no claims
		return nil
	}
	allBound, err := pl.binder.assumePodVolumes(pod, nodeName, pv)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.allBound = allBound
	return nil
}

// Unreserve implements framework.ReservePlugin: the assumptions are
// dropped (idempotent).
func (pl *Plugin) Unreserve(_ context.Context, state *framework.CycleState, _ *api.Pod, nodeName string) {
	s, err := getStateData(state)
	if err != nil {
		return
	}
	if pv, ok := s.podVolumesByNode[nodeName]; ok {
		pl.binder.revertAssumed(pv)
	}
}

// PreBindPreFlight implements framework.PreBindPlugin: Skip when every
// claim is bound.
func (pl *Plugin) PreBindPreFlight(_ context.Context, state *framework.CycleState, _ *api.Pod, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.allBound {
		return framework.NewStatus(framework.Skip)
	}
	if _, ok := s.podVolumesByNode[nodeName]; !ok {
		return framework.AsStatus(fmt.Errorf("no pod volumes found for node %q", nodeName))
	}
	return nil
}

// PreBind implements framework.PreBindPlugin: the bindings are written
// and awaited (pod's spec.nodeName is the chosen node).
func (pl *Plugin) PreBind(ctx context.Context, state *framework.CycleState, pod *api.Pod, nodeName string) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.allBound {
		return nil
	}
	pv, ok := s.podVolumesByNode[nodeName]
	if !ok {
		return framework.AsStatus(fmt.Errorf("no pod volumes found for node %q", nodeName))
	}
	if err := pl.binder.bindPodVolumes(ctx, pod, pv); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}

// apiWriter is the Writer over the apiserver.
type apiWriter struct {
	volumes *client.ResourceClient[api.PersistentVolume, *api.PersistentVolume]
	claims  *client.ResourceClient[api.PersistentVolumeClaim, *api.PersistentVolumeClaim]
}

// NewAPIWriter returns the Writer updating volumes and claims through c.
func NewAPIWriter(c *client.Client) Writer {
	return apiWriter{volumes: client.Resource[api.PersistentVolume](c), claims: client.Resource[api.PersistentVolumeClaim](c)}
}

func (w apiWriter) UpdateVolume(ctx context.Context, pv *api.PersistentVolume) (*api.PersistentVolume, error) {
	return w.volumes.Update(ctx, pv)
}

func (w apiWriter) UpdateClaim(ctx context.Context, pvc *api.PersistentVolumeClaim) (*api.PersistentVolumeClaim, error) {
	return w.claims.Namespace(pvc.Namespace).Update(ctx, pvc)
}
