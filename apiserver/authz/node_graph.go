package authz

import (
	"encoding/json"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// NodeGraph holds what the Node authorizer relates to nodes, as Kubernetes'
// graph (plugin/pkg/auth/authorizer/node/graph.go) does: each pod's node,
// the secrets, config maps, claims and service account each node's pods
// reference, and each PersistentVolume's claim and the secrets its driver
// hands the kubelet. The watch of pods and volumes keeps it current through
// SetPod, DeletePod, SetPersistentVolume and DeletePersistentVolume (or
// Replace* after a relist); a check is then a few map lookups instead of a
// decoding of every pod on the node. It is safe for concurrent use.
type NodeGraph struct {
	mu sync.RWMutex
	// pods are the known pods by namespace/name.
	pods map[nsName]*graphPod
	// refs counts, per node, the pods bound to it whose spec names an
	// object: a mirror pod relates only itself to its node.
	refs map[string]map[graphRef]int
	// volumes are the PersistentVolumes by name.
	volumes map[string]*graphVolume
	// volumesBySecret are the volumes whose driver hands the kubelet a
	// secret, by that secret.
	volumesBySecret map[nsName]map[string]struct{}
}

type nsName struct{ namespace, name string }

// graphRef is an object a pod's spec names, in the pod's namespace.
type graphRef struct {
	kind vertexKind
	nsName
}

type graphPod struct {
	node string
	// refs are what the pod relates to its node (none for a mirror pod).
	refs []graphRef
}

type graphVolume struct {
	// claim is the volume's spec.claimRef (zero when unbound).
	claim nsName
	// secrets are the kubelet-visible secrets of its CSI source.
	secrets []nsName
}

// NewNodeGraph returns an empty graph.
func NewNodeGraph() *NodeGraph {
	g := &NodeGraph{}
	g.reset()
	return g
}

func (g *NodeGraph) reset() {
	g.pods = map[nsName]*graphPod{}
	g.refs = map[string]map[graphRef]int{}
	g.volumes = map[string]*graphVolume{}
	g.volumesBySecret = map[nsName]map[string]struct{}{}
}

// SetPod records a pod that was added or updated.
func (g *NodeGraph) SetPod(pod *api.Pod) {
	p := newGraphPod(pod)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setPodLocked(nsName{pod.Namespace, pod.Name}, p)
}

// DeletePod forgets the pod namespace/name.
func (g *NodeGraph) DeletePod(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setPodLocked(nsName{namespace, name}, nil)
}

// ReplacePods makes pods the whole set of pods (after a relist).
func (g *NodeGraph) ReplacePods(pods []*api.Pod) {
	vertices := make(map[nsName]*graphPod, len(pods))
	for _, pod := range pods {
		vertices[nsName{pod.Namespace, pod.Name}] = newGraphPod(pod)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	replaceAll(g.pods, vertices, g.setPodLocked)
}

// replaceAll makes next the content of current through set: the entries
// of current missing from next are set to nil, then next's are set.
func replaceAll[K comparable, V any](current, next map[K]*V, set func(K, *V)) {
	for k := range current {
		if next[k] == nil {
			set(k, nil)
		}
	}
	for k, v := range next {
		set(k, v)
	}
}

// setPodLocked replaces the pod k's vertex by p (nil: deletes it).
func (g *NodeGraph) setPodLocked(k nsName, p *graphPod) {
	if old := g.pods[k]; old != nil {
		refs := g.refs[old.node]
		for _, r := range old.refs {
			if refs[r]--; refs[r] <= 0 {
				delete(refs, r)
			}
		}
		if len(refs) == 0 {
			delete(g.refs, old.node)
		}
	}
	if p == nil {
		delete(g.pods, k)
		return
	}
	g.pods[k] = p
	if len(p.refs) == 0 {
		return
	}
	refs := g.refs[p.node]
	if refs == nil {
		refs = map[graphRef]int{}
		g.refs[p.node] = refs
	}
	for _, r := range p.refs {
		refs[r]++
	}
}

// newGraphPod computes what pod relates to its node: the secrets and config
// maps it references, its claims (an ephemeral volume's is named
// POD-VOLUME) and its service account; none for a mirror pod or a pod not
// bound to a node.
func newGraphPod(pod *api.Pod) *graphPod {
	p := &graphPod{node: pod.Spec.NodeName}
	if p.node == "" {
		return p
	}
	if _, mirror := pod.Annotations[api.MirrorPodAnnotationKey]; mirror {
		return p
	}
	seen := map[graphRef]bool{}
	add := func(kind vertexKind, name string) {
		r := graphRef{kind, nsName{pod.Namespace, name}}
		if name != "" && !seen[r] {
			seen[r] = true
			p.refs = append(p.refs, r)
		}
	}
	api.VisitPodSecretNames(pod, func(name string) bool { add(secretVertex, name); return true })
	api.VisitPodConfigMapNames(pod, func(name string) bool { add(configMapVertex, name); return true })
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			add(pvcVertex, v.PersistentVolumeClaim.ClaimName)
		case len(v.Ephemeral) > 0:
			add(pvcVertex, pod.Name+"-"+v.Name)
		}
	}
	add(serviceAccountVertex, pod.Spec.ServiceAccountName)
	return p
}

// SetPersistentVolume records a volume that was added or updated.
func (g *NodeGraph) SetPersistentVolume(pv *api.PersistentVolume) {
	v := newGraphVolume(pv)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setVolumeLocked(pv.Name, v)
}

// DeletePersistentVolume forgets the volume name.
func (g *NodeGraph) DeletePersistentVolume(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setVolumeLocked(name, nil)
}

// ReplacePersistentVolumes makes pvs the whole set of volumes.
func (g *NodeGraph) ReplacePersistentVolumes(pvs []*api.PersistentVolume) {
	vertices := make(map[string]*graphVolume, len(pvs))
	for _, pv := range pvs {
		vertices[pv.Name] = newGraphVolume(pv)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	replaceAll(g.volumes, vertices, g.setVolumeLocked)
}

func (g *NodeGraph) setVolumeLocked(name string, v *graphVolume) {
	if old := g.volumes[name]; old != nil {
		for _, s := range old.secrets {
			delete(g.volumesBySecret[s], name)
			if len(g.volumesBySecret[s]) == 0 {
				delete(g.volumesBySecret, s)
			}
		}
	}
	if v == nil {
		delete(g.volumes, name)
		return
	}
	g.volumes[name] = v
	for _, s := range v.secrets {
		if g.volumesBySecret[s] == nil {
			g.volumesBySecret[s] = map[string]struct{}{}
		}
		g.volumesBySecret[s][name] = struct{}{}
	}
}

func newGraphVolume(pv *api.PersistentVolume) *graphVolume {
	v := &graphVolume{}
	if ref := pv.Spec.ClaimRef; ref != nil {
		v.claim = nsName{ref.Namespace, ref.Name}
	}
	v.secrets = kubeletVisibleSecrets(pv)
	return v
}

// kubeletVisibleSecrets are the secrets pv's CSI source names for the
// kubelet (node publish, stage or expand), as Kubernetes'
// VisitPVSecretNames with kubeletVisible. The in-tree sources minik8s
// keeps as raw JSON are not followed.
func kubeletVisibleSecrets(pv *api.PersistentVolume) []nsName {
	if len(pv.Spec.CSI) == 0 {
		return nil
	}
	var csi map[string]json.RawMessage
	if json.Unmarshal(pv.Spec.CSI, &csi) != nil {
		return nil
	}
	var out []nsName
	for _, key := range []string{"nodePublishSecretRef", "nodeStageSecretRef", "nodeExpandSecretRef"} {
		var ref struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		}
		if csi[key] == nil || json.Unmarshal(csi[key], &ref) != nil || ref.Name == "" {
			continue
		}
		out = append(out, nsName{ref.Namespace, ref.Name})
	}
	return out
}

// podNode returns the node of the pod namespace/name ("" when unbound);
// found is false when the pod is unknown.
func (g *NodeGraph) podNode(namespace, name string) (node string, found bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	p := g.pods[nsName{namespace, name}]
	if p == nil {
		return "", false
	}
	return p.node, true
}

// references reports whether a pod bound to node (not a mirror pod)
// names the object namespace/name of kind.
func (g *NodeGraph) references(node string, kind vertexKind, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.referencesLocked(node, graphRef{kind, nsName{namespace, name}})
}

func (g *NodeGraph) referencesLocked(node string, r graphRef) bool {
	return g.refs[node][r] > 0
}

// volumeUsed reports whether the claim of the volume name is used by a
// pod on node.
func (g *NodeGraph) volumeUsed(node, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v := g.volumes[name]
	return v != nil && v.claim.name != "" && g.referencesLocked(node, graphRef{pvcVertex, v.claim})
}

// volumeSecretUsed reports whether the secret namespace/name is one a
// volume hands the kubelet and that volume's claim is used on node:
// node <- pod <- claim <- volume <- secret.
func (g *NodeGraph) volumeSecretUsed(node, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for pv := range g.volumesBySecret[nsName{namespace, name}] {
		if v := g.volumes[pv]; v.claim.name != "" && g.referencesLocked(node, graphRef{pvcVertex, v.claim}) {
			return true
		}
	}
	return false
}
