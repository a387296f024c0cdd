package volumebinding

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// Reasons a node does not fit, as kube v1.37's (ConflictReason).
const (
	ErrReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ErrReasonNotEnoughSpace = "node(s) did not have enough free storage"
	ErrReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	// ErrReasonUnboundImmediate is the PreFilter's rejection of a pod
	// whose Immediate claims the PV controller has not bound yet.
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

// DefaultBindTimeout is kube's VolumeBindingArgs.bindTimeoutSeconds
// default: how long PreBind waits for the claims to be bound.
const DefaultBindTimeout = 600 * time.Second

// Listers are the informer caches the plugin reads.
type Listers struct {
	Pods    icache.Lister[api.Pod]
	Nodes   icache.Lister[api.Node]
	Claims  icache.Lister[api.PersistentVolumeClaim]
	Volumes icache.Lister[api.PersistentVolume]
	Classes icache.Lister[api.StorageClass]
}

// Writer makes the API writes of a binding: a volume pre-bound to a claim,
// a claim annotated for provisioning.
type Writer interface {
	UpdateVolume(ctx context.Context, pv *api.PersistentVolume) (*api.PersistentVolume, error)
	UpdateClaim(ctx context.Context, pvc *api.PersistentVolumeClaim) (*api.PersistentVolumeClaim, error)
}

// bindingInfo is a claim and the volume chosen for it.
type bindingInfo struct {
	pvc *api.PersistentVolumeClaim
	pv  *api.PersistentVolume
}

// podVolumes is what a node needs done for the pod's unbound claims.
type podVolumes struct {
	staticBindings    []*bindingInfo
	dynamicProvisions []*api.PersistentVolumeClaim
}

// podVolumeClaims sorts a pod's claims, as kube's PodVolumeClaims.
type podVolumeClaims struct {
	boundClaims               []*api.PersistentVolumeClaim
	unboundClaimsDelayBinding []*api.PersistentVolumeClaim
	unboundClaimsImmediate    []*api.PersistentVolumeClaim
	// unboundVolumesDelayBinding are the volumes of the classes of the
	// delay-binding claims, by class.
	unboundVolumesDelayBinding map[string][]*api.PersistentVolume
}

// binder is kube's volumeBinder: it finds, assumes and binds a pod's
// volumes.
type binder struct {
	listers      Listers
	writer       Writer
	log          *slog.Logger
	pvCache      *assumeCache[api.PersistentVolume]
	pvcCache     *assumeCache[api.PersistentVolumeClaim]
	bindTimeout  time.Duration
	pollInterval time.Duration
}

func newBinder(l Listers, w Writer, bindTimeout time.Duration, log *slog.Logger) *binder {
	pvcGet := func(key string) (*api.PersistentVolumeClaim, error) {
		ns, name, err := icache.SplitMetaNamespaceKey(key)
		if err != nil {
			return nil, err
		}
		return l.Claims.Namespace(ns).Get(name)
	}
	return &binder{
		listers:      l,
		writer:       w,
		log:          log,
		pvCache:      newAssumeCache(l.Volumes.Get, func(o *api.PersistentVolume) *api.ObjectMeta { return &o.ObjectMeta }),
		pvcCache:     newAssumeCache(pvcGet, func(o *api.PersistentVolumeClaim) *api.ObjectMeta { return &o.ObjectMeta }),
		bindTimeout:  bindTimeout,
		pollInterval: time.Second,
	}
}

func claimKey(pvc *api.PersistentVolumeClaim) string { return pvc.Namespace + "/" + pvc.Name }

func podKey(p *api.Pod) string { return p.Namespace + "/" + p.Name }

func (b *binder) getClass(name string) (*api.StorageClass, error) { return b.listers.Classes.Get(name) }

// listVolumes returns the volumes of class, assumed versions first.
func (b *binder) listVolumes(class string) []*api.PersistentVolume {
	var out []*api.PersistentVolume
	for _, pv := range b.listers.Volumes.List(nil) {
		pv = b.pvCache.overlay(pv.Name, pv)
		if storagevolume.VolumeClass(pv) == class {
			out = append(out, pv)
		}
	}
	return out
}

// claimName is the claim a volume of the pod uses ("" for none): the
// persistentVolumeClaim's, or the one the ephemeral volume controller
// makes for a generic ephemeral volume (POD-VOLUME).
func claimName(pod *api.Pod, v *api.Volume) (name string, ephemeral bool) {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName, false
	case len(v.Ephemeral) > 0:
		return pod.Name + "-" + v.Name, true
	}
	return "", false
}

// volumeIsForPod is kube's ephemeral.VolumeIsForPod.
func volumeIsForPod(pod *api.Pod, pvc *api.PersistentVolumeClaim) error {
	if pvc.Namespace != pod.Namespace || !api.IsControlledBy(&pvc.ObjectMeta, pod.UID) {
		return fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
	}
	return nil
}

func isPVCFullyBound(pvc *api.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[storagevolume.AnnBindCompleted]
	return pvc.Spec.VolumeName != "" && ok
}

// isVolumeBound reports whether the pod volume's claim is fully bound (true
// for volumes without a claim, with a nil claim).
func (b *binder) isVolumeBound(pod *api.Pod, v *api.Volume) (bool, *api.PersistentVolumeClaim, error) {
	name, ephemeral := claimName(pod, v)
	if name == "" {
		return true, nil, nil
	}
	key := pod.Namespace + "/" + name
	pvc, err := b.pvcCache.Get(key)
	if err != nil {
		return false, nil, fmt.Errorf("error getting PVC %q: %v", key, err)
	}
	if ephemeral {
		if err := volumeIsForPod(pod, pvc); err != nil {
			return false, nil, err
		}
	}
	return isPVCFullyBound(pvc), pvc, nil
}

func (b *binder) arePodVolumesBound(pod *api.Pod) bool {
	for i := range pod.Spec.Volumes {
		if bound, _, _ := b.isVolumeBound(pod, &pod.Spec.Volumes[i]); !bound {
			return false
		}
	}
	return true
}

// getPodVolumeClaims sorts the pod's claims: bound, unbound with delayed
// binding, unbound immediate (including pre-bound ones, which the PV
// controller completes).
func (b *binder) getPodVolumeClaims(pod *api.Pod) (*podVolumeClaims, error) {
	out := &podVolumeClaims{}
	for i := range pod.Spec.Volumes {
		bound, pvc, err := b.isVolumeBound(pod, &pod.Spec.Volumes[i])
		if err != nil {
			return nil, err
		}
		if pvc == nil {
			continue
		}
		if bound {
			out.boundClaims = append(out.boundClaims, pvc)
			continue
		}
		delay, err := storagevolume.IsDelayBindingMode(pvc, b.getClass)
		if err != nil {
			return nil, err
		}
		if delay && pvc.Spec.VolumeName == "" {
			out.unboundClaimsDelayBinding = append(out.unboundClaimsDelayBinding, pvc)
		} else {
			out.unboundClaimsImmediate = append(out.unboundClaimsImmediate, pvc)
		}
	}
	out.unboundVolumesDelayBinding = map[string][]*api.PersistentVolume{}
	for _, pvc := range out.unboundClaimsDelayBinding {
		class := storagevolume.ClaimClass(pvc)
		if _, ok := out.unboundVolumesDelayBinding[class]; !ok {
			out.unboundVolumesDelayBinding[class] = b.listVolumes(class)
		}
	}
	return out, nil
}

// findPodVolumes checks the pod's claims against node: the reasons it
// does not fit, or what binding it there takes.
func (b *binder) findPodVolumes(pod *api.Pod, claims *podVolumeClaims, node *api.Node) (*podVolumes, []string, error) {
	pv := &podVolumes{}
	boundSatisfied, boundPVsFound, unboundSatisfied, sufficientStorage := true, true, true, true
	reasons := func() []string {
		var r []string
		if !boundSatisfied {
			r = append(r, ErrReasonNodeConflict)
		}
		if !unboundSatisfied {
			r = append(r, ErrReasonBindConflict)
		}
		if !sufficientStorage {
			r = append(r, ErrReasonNotEnoughSpace)
		}
		if !boundPVsFound {
			r = append(r, ErrReasonPVNotExist)
		}
		return r
	}
	var err error
	if len(claims.boundClaims) > 0 {
		boundSatisfied, boundPVsFound, err = b.checkBoundClaims(claims.boundClaims, node)
		if err != nil {
			return nil, nil, err
		}
	}
	if len(claims.unboundClaimsDelayBinding) == 0 {
		return pv, reasons(), nil
	}
	var toMatch, toProvision []*api.PersistentVolumeClaim
	for _, c := range claims.unboundClaimsDelayBinding {
		if selected, ok := c.Annotations[storagevolume.AnnSelectedNode]; ok {
			if selected != node.Name {
				unboundSatisfied = false
				return pv, reasons(), nil
			}
			toProvision = append(toProvision, c)
		} else {
			toMatch = append(toMatch, c)
		}
	}
	if len(toMatch) > 0 {
		var unbound []*api.PersistentVolumeClaim
		unboundSatisfied, pv.staticBindings, unbound, err = b.findMatchingVolumes(toMatch, claims.unboundVolumesDelayBinding, node)
		if err != nil {
			return nil, nil, err
		}
		toProvision = append(toProvision, unbound...)
	}
	if len(toProvision) > 0 {
		unboundSatisfied, sufficientStorage, pv.dynamicProvisions, err = b.checkVolumeProvisions(toProvision, node)
		if err != nil {
			return nil, nil, err
		}
	}
	return pv, reasons(), nil
}

// checkBoundClaims reports whether the bound claims' volumes allow node,
// and whether they all exist.
func (b *binder) checkBoundClaims(claims []*api.PersistentVolumeClaim, node *api.Node) (satisfied, found bool, err error) {
	for _, pvc := range claims {
		pv, err := b.pvCache.Get(pvc.Spec.VolumeName)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return true, false, nil
			}
			return true, false, err
		}
		if storagevolume.CheckNodeAffinity(pv, node.Labels) != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

// findMatchingVolumes picks a volume for each claim, smallest claims
// first, never the same volume twice; the claims left over go to
// provisioning.
func (b *binder) findMatchingVolumes(claims []*api.PersistentVolumeClaim, volumes map[string][]*api.PersistentVolume, node *api.Node) (found bool, bindings []*bindingInfo, unbound []*api.PersistentVolumeClaim, err error) {
	claims = append([]*api.PersistentVolumeClaim(nil), claims...)
	sort.SliceStable(claims, func(i, j int) bool {
		a, c := claims[i].Spec.Resources.Requests[api.ResourceStorage], claims[j].Spec.Resources.Requests[api.ResourceStorage]
		return a.Cmp(c) < 0
	})
	chosen := map[string]bool{}
	found = true
	for _, pvc := range claims {
		pv, err := storagevolume.FindMatchingVolume(pvc, volumes[storagevolume.ClaimClass(pvc)], node, chosen, true)
		if err != nil {
			return false, nil, nil, err
		}
		if pv == nil {
			unbound = append(unbound, pvc)
			found = false
			continue
		}
		chosen[pv.Name] = true
		bindings = append(bindings, &bindingInfo{pvc: pvc, pv: pv})
	}
	return found, bindings, unbound, nil
}

// checkVolumeProvisions reports whether every claim's class can provision
// a volume reachable from node. Storage capacity (CSIStorageCapacity) is
// not tracked: no CSI driver here publishes it, so capacity always
// suffices, as in kube for provisioners that are not such drivers.
func (b *binder) checkVolumeProvisions(claims []*api.PersistentVolumeClaim, node *api.Node) (satisfied, sufficient bool, provisions []*api.PersistentVolumeClaim, err error) {
	for _, pvc := range claims {
		className := storagevolume.ClaimClass(pvc)
		if className == "" {
			return false, false, nil, fmt.Errorf("no class for claim %q", claimKey(pvc))
		}
		class, err := b.listers.Classes.Get(className)
		if err != nil {
			return false, false, nil, fmt.Errorf("failed to find storage class %q", className)
		}
		if class.Provisioner == "" || class.Provisioner == storagevolume.NotSupportedProvisioner {
			return false, true, nil, nil
		}
		if !matchTopologySelectorTerms(class.AllowedTopologies, node.Labels) {
			return false, true, nil, nil
		}
		provisions = append(provisions, pvc)
	}
	return true, true, provisions, nil
}

// matchTopologySelectorTerms is kube's: no terms match every node; else
// any term whose every requirement's key has one of its values.
func matchTopologySelectorTerms(terms []api.TopologySelectorTerm, labels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		ok := true
		for _, r := range t.MatchLabelExpressions {
			v, present := labels[r.Key]
			if !present || !contains(r.Values, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// assumePodVolumes records the node's bindings in the caches: volumes
// pre-bound to their claims, claims annotated with the node. It returns
// true when every claim is bound already (nothing to do in PreBind).
func (b *binder) assumePodVolumes(pod *api.Pod, nodeName string, pv *podVolumes) (bool, error) {
	if b.arePodVolumesBound(pod) {
		return true, nil
	}
	var bindings []*bindingInfo
	for _, bi := range pv.staticBindings {
		newPV, dirty := storagevolume.BindVolumeToClaim(bi.pv, bi.pvc)
		if dirty {
			if err := b.pvCache.Assume(newPV.Name, newPV); err != nil {
				b.revertVolumes(bindings)
				return false, err
			}
		}
		bindings = append(bindings, &bindingInfo{pvc: bi.pvc, pv: newPV})
	}
	var claims []*api.PersistentVolumeClaim
	for _, c := range pv.dynamicProvisions {
		clone := api.DeepCopy(c)
		if clone.Annotations == nil {
			clone.Annotations = map[string]string{}
		}
		clone.Annotations[storagevolume.AnnSelectedNode] = nodeName
		if err := b.pvcCache.Assume(claimKey(clone), clone); err != nil {
			b.revertVolumes(bindings)
			b.revertClaims(claims)
			return false, err
		}
		claims = append(claims, clone)
	}
	// Non-nil even when empty: bindAPIUpdate tells "nothing assumed" apart.
	pv.staticBindings = append(make([]*bindingInfo, 0, len(bindings)), bindings...)
	pv.dynamicProvisions = append(make([]*api.PersistentVolumeClaim, 0, len(claims)), claims...)
	return false, nil
}

func (b *binder) revertAssumed(pv *podVolumes) {
	b.revertVolumes(pv.staticBindings)
	b.revertClaims(pv.dynamicProvisions)
}

func (b *binder) revertVolumes(bindings []*bindingInfo) {
	for _, bi := range bindings {
		b.pvCache.Restore(bi.pv.Name)
	}
}

func (b *binder) revertClaims(claims []*api.PersistentVolumeClaim) {
	for _, c := range claims {
		b.pvcCache.Restore(claimKey(c))
	}
}

// bindPodVolumes writes the assumed bindings and waits until the PV
// controller (and provisioner) bound every claim, the bind timeout passed,
// or a check failed.
func (b *binder) bindPodVolumes(ctx context.Context, pod *api.Pod, pv *podVolumes) error {
	if err := b.bindAPIUpdate(ctx, pod, pv.staticBindings, pv.dynamicProvisions); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, b.bindTimeout)
	defer cancel()
	t := time.NewTicker(b.pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("binding volumes: %w", ctx.Err())
		case <-t.C:
		}
		done, err := b.checkBindings(pod, pv.staticBindings, pv.dynamicProvisions)
		if err != nil {
			return fmt.Errorf("binding volumes: %w", err)
		}
		if done {
			b.log.Debug("all claims of the pod are bound", "pod", podKey(pod))
			return nil
		}
	}
}

// bindAPIUpdate writes the pre-bound volumes, then the annotated claims;
// the assumptions not written are reverted.
func (b *binder) bindAPIUpdate(ctx context.Context, pod *api.Pod, bindings []*bindingInfo, claims []*api.PersistentVolumeClaim) error {
	if bindings == nil {
		return fmt.Errorf("failed to get cached bindings for pod %q", podKey(pod))
	}
	if claims == nil {
		return fmt.Errorf("failed to get cached claims to provision for pod %q", podKey(pod))
	}
	doneBindings, doneClaims := 0, 0
	defer func() {
		b.revertVolumes(bindings[doneBindings:])
		b.revertClaims(claims[doneClaims:])
	}()
	for _, bi := range bindings {
		newPV, err := b.writer.UpdateVolume(ctx, bi.pv)
		if err != nil {
			return err
		}
		b.log.Info("updated PersistentVolume with claim; waiting for binding to complete", "pod", podKey(pod), "pv", bi.pv.Name, "pvc", claimKey(bi.pvc))
		bi.pv = newPV
		doneBindings++
	}
	for i, c := range claims {
		newClaim, err := b.writer.UpdateClaim(ctx, c)
		if err != nil {
			return err
		}
		b.log.Info("annotated PersistentVolumeClaim with the selected node for provisioning", "pod", podKey(pod), "pvc", claimKey(c), "node", c.Annotations[storagevolume.AnnSelectedNode])
		claims[i] = newClaim
		doneClaims++
	}
	return nil
}

// checkBindings reads the informers (not the assumptions): true when every
// claim is fully bound; an error when the binding was undone and the pod
// must be scheduled again.
func (b *binder) checkBindings(pod *api.Pod, bindings []*bindingInfo, claims []*api.PersistentVolumeClaim) (bool, error) {
	node, err := b.listers.Nodes.Get(pod.Spec.NodeName)
	if err != nil {
		return false, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err)
	}
	if _, err := b.listers.Pods.Namespace(pod.Namespace).Get(pod.Name); err != nil && apierrors.IsNotFound(err) {
		return false, fmt.Errorf("pod does not exist any more: %w", err)
	}
	for _, bi := range bindings {
		pv, err := b.pvCache.GetAPIObj(bi.pv.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		pvc, err := b.pvcCache.GetAPIObj(claimKey(bi.pvc))
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		if newer(bi.pv.ResourceVersion, pv.ResourceVersion) {
			return false, nil // the informer has not seen our write yet
		}
		if err := storagevolume.CheckNodeAffinity(pv, node.Labels); err != nil {
			return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, node.Name, err)
		}
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
			return false, fmt.Errorf("ClaimRef got reset for pv %q", pv.Name)
		}
		if !isPVCFullyBound(pvc) {
			return false, nil
		}
	}
	for _, c := range claims {
		pvc, err := b.pvcCache.GetAPIObj(claimKey(c))
		if err != nil {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", err)
		}
		if newer(c.ResourceVersion, pvc.ResourceVersion) {
			return false, nil
		}
		if pvc.Annotations == nil {
			return false, fmt.Errorf("selectedNode annotation reset for PVC %q", pvc.Name)
		}
		if pvc.Annotations[storagevolume.AnnSelectedNode] != pod.Spec.NodeName {
			// The provisioner removes selected-node when it cannot
			// provision there: schedule the pod again.
			return false, fmt.Errorf("provisioning failed for PVC %q", pvc.Name)
		}
		if pvc.Spec.VolumeName != "" {
			pv, err := b.pvCache.GetAPIObj(pvc.Spec.VolumeName)
			if err != nil {
				if apierrors.IsNotFound(err) {
					return false, nil // not seen yet
				}
				return false, fmt.Errorf("failed to get pv %q from cache: %w", pvc.Spec.VolumeName, err)
			}
			if err := storagevolume.CheckNodeAffinity(pv, node.Labels); err != nil {
				return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, node.Name, err)
			}
		}
		if !isPVCFullyBound(pvc) {
			return false, nil
		}
	}
	return true, nil
}
