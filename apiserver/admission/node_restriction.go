package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
)

// Label namespaces NodeRestriction knows, as in k8s.io/api/core/v1.
const (
	// LabelNamespaceNodeRestriction is reserved for labels an administrator
	// sets to steer workloads; a kubelet may never set them.
	LabelNamespaceNodeRestriction = "node-restriction.kubernetes.io"
	labelNamespaceSuffixKubelet   = "kubelet.kubernetes.io"
	labelNamespaceSuffixNode      = "node.kubernetes.io"
)

// kubeletLabels are the kubernetes.io and k8s.io labels a kubelet may set
// on its own Node (k8s.io/kubelet's IsKubeletLabel), besides the
// kubelet.kubernetes.io and node.kubernetes.io namespaces.
var kubeletLabels = []string{
	api.LabelHostname,
	api.LabelTopologyZone,
	api.LabelTopologyRegion,
	"failure-domain.beta.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region",
	"beta.kubernetes.io/instance-type",
	api.LabelInstanceTypeStable,
	api.LabelOSStable,
	api.LabelArchStable,
	"beta.kubernetes.io/os",
	"beta.kubernetes.io/arch",
}

// NodeGetter reads a Node; found is false when it does not exist.
type NodeGetter interface {
	GetNode(ctx context.Context, name string) (node *api.Node, found bool, err error)
}

// NodeRestriction is Kubernetes' NodeRestriction admission plugin. It
// limits what a kubelet ("system:node:NAME" in system:nodes) may write to
// what concerns its own node, whatever RBAC allows:
//   - its own Node only: created with, and updated to, no labels outside
//     the set kubelets may set (no node-restriction.kubernetes.io/ label,
//     no kubernetes.io or k8s.io label but the well-known topology, OS and
//     instance labels and the kubelet.kubernetes.io and node.kubernetes.io
//     namespaces), and without changing its taints; it may not delete a
//     Node at all;
//   - pods: only mirror pods bound to itself, owned by its Node and
//     referencing no service account, secret, config map or claim; only the
//     status (not the labels) of pods bound to it; only deleting pods bound
//     to it;
//   - only its own Lease in kube-node-lease, its own CSINode, and the
//     ResourceSlices naming it;
//   - of claims, only the status (capacity and conditions);
//   - PodCertificateRequests only for its running pods, their service
//     accounts and signers they mount;
//   - tokens (serviceaccounts/NAME/token) only bound to a pod, by name and
//     UID, that is bound to itself, and (ServiceAccountNodeAudienceRestriction,
//     on by default since v1.33) only for at most one audience that the pod
//     names: a projected serviceAccountToken volume's audience ("" when the
//     request names none, before the API audiences are filled in), or a
//     tokenRequests audience of the CSIDriver of one of its CSI volumes,
//     directly, through a claim's volume or an ephemeral volume's claim;
//     any other audience needs the authorizer to allow the node the verb
//     request-serviceaccounts-token-audience on the audience as resource.
//
// Other users' requests pass untouched. Updates and deletes are checked
// against the stored object (Attributes.OldObject).
type NodeRestriction struct {
	// Nodes verifies the node UID in a mirror pod's owner reference.
	Nodes NodeGetter
	// Pods reads the pod a kubelet's token request is bound to.
	Pods PodGetter
	// Volumes leads from a pod's volumes to their CSI drivers, for the
	// audiences a kubelet may ask tokens for.
	Volumes VolumeGetter
	// ServiceAccounts verifies a PodCertificateRequest's service account.
	ServiceAccounts ServiceAccountGetter
	// Authorizer decides token audiences and certificate signers the pod
	// does not name.
	Authorizer authz.Authorizer
}

// VolumeGetter reads claims, volumes and CSI drivers; found is false when
// the object does not exist.
type VolumeGetter interface {
	GetPersistentVolumeClaim(ctx context.Context, namespace, name string) (claim *api.PersistentVolumeClaim, found bool, err error)
	GetPersistentVolume(ctx context.Context, name string) (volume *api.PersistentVolume, found bool, err error)
	GetCSIDriver(ctx context.Context, name string) (driver *api.CSIDriver, found bool, err error)
}

// PodGetter reads a pod; a missing pod is a NotFound error.
type PodGetter interface {
	GetPod(ctx context.Context, namespace, name string) (*api.Pod, error)
}

var _ Validator = (*NodeRestriction)(nil)

// Name implements Plugin.
func (*NodeRestriction) Name() string { return "NodeRestriction" }

// Handles implements Plugin.
func (*NodeRestriction) Handles(op Operation) bool {
	return op == Create || op == Update || op == Delete
}

// Validate implements Validator.
func (p *NodeRestriction) Validate(ctx context.Context, a *Attributes) error {
	node, isNode := authz.NodeIdentity(a.User)
	if !isNode {
		return nil
	}
	if node == "" {
		return NewForbidden(a, fmt.Errorf("could not determine node from user %q", a.User.Name))
	}
	switch a.Resource.Group + "/" + a.Resource.Resource {
	case "/pods":
		switch a.Subresource {
		case "":
			return p.admitPod(ctx, node, a)
		case "status":
			return admitPodStatus(node, a)
		case "eviction":
			return admitPodEviction(node, a)
		}
		return NewForbidden(a, fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource))
	case "/nodes":
		return admitNode(node, a)
	case "coordination.k8s.io/leases":
		return admitLease(node, a)
	case "/serviceaccounts":
		return p.admitServiceAccount(ctx, node, a)
	case "/persistentvolumeclaims":
		return admitPVCStatus(node, a)
	case "storage.k8s.io/csinodes":
		return admitCSINode(node, a)
	case "resource.k8s.io/resourceslices":
		return admitResourceSlice(node, a)
	case api.CertificatesGroupName + "/certificatesigningrequests":
		return admitCSR(node, a)
	case api.CertificatesGroupName + "/podcertificaterequests":
		return p.admitPodCertificateRequest(ctx, node, a)
	}
	return nil
}

// admitServiceAccount is Kubernetes' rule for a kubelet's TokenRequest: it
// must be bound to a pod, by name and UID, scheduled on the node, so a
// node can never mint a node-bound or unbound token.
func (p *NodeRestriction) admitServiceAccount(ctx context.Context, node string, a *Attributes) error {
	if a.Operation != Create || a.Subresource != "token" {
		return nil
	}
	tr, ok := a.Object.(*api.TokenRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return NewForbidden(a, fmt.Errorf("node requested token not bound to a pod"))
	}
	if ref.UID == "" {
		return NewForbidden(a, fmt.Errorf("node requested token with a pod binding without a uid"))
	}
	if p.Pods == nil {
		return apierrors.NewInternalError(fmt.Errorf("NodeRestriction has no pod getter to verify a token's pod"))
	}
	pod, err := p.Pods.GetPod(ctx, a.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return NewForbidden(a, err)
	}
	if ref.UID != pod.UID {
		return NewForbidden(a, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != node {
		return NewForbidden(a, fmt.Errorf("node requested token bound to a pod scheduled on a different node"))
	}
	if err := p.checkAudience(ctx, tr, pod, a); err != nil {
		return NewForbidden(a, err)
	}
	return nil
}

// requestAudienceVerb is the verb an authorizer must allow a node, on the
// audience as resource, for a token audience its pod does not name.
const requestAudienceVerb = "request-serviceaccounts-token-audience"

// checkAudience is Kubernetes' validateNodeServiceAccountAudience.
func (p *NodeRestriction) checkAudience(ctx context.Context, tr *api.TokenRequest, pod *api.Pod, a *Attributes) error {
	audience := ""
	switch len(tr.Spec.Audiences) {
	case 0:
	case 1:
		audience = tr.Spec.Audiences[0]
	default:
		return errors.New("node may only request 0 or 1 audiences")
	}
	found, err := p.podReferencesAudience(ctx, pod, audience)
	if err != nil {
		return fmt.Errorf("error validating audience %q: %w", audience, err)
	}
	if found {
		return nil
	}
	if p.Authorizer == nil {
		return fmt.Errorf("error authorizing %s to request tokens for audience %q: no authorizer", a.User.Name, audience)
	}
	d, _, err := p.Authorizer.Authorize(ctx, authz.Attributes{User: a.User, Verb: requestAudienceVerb,
		APIGroup: a.Resource.Group, APIVersion: a.Resource.Version, Resource: audience,
		Namespace: a.Namespace, Name: a.Name, IsResourceRequest: true})
	// An authorizer may allow despite an error (RBAC with a missing role).
	if d == authz.Allow {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error authorizing %s to request tokens for audience %q: %w", a.User.Name, audience, err)
	}
	return fmt.Errorf("%s is not authorized to request tokens for audience %q", a.User.Name, audience)
}

// podReferencesAudience reports whether one of pod's volumes names
// audience: a projected service account token, or a CSI driver's token
// request (inline, through a claim, or through an ephemeral volume's
// claim). Errors reaching a driver are returned only when no volume names
// the audience. In-tree volumes Kubernetes would translate to CSI are not
// followed: minik8s has no CSI translation.
func (p *NodeRestriction) podReferencesAudience(ctx context.Context, pod *api.Pod, audience string) (bool, error) {
	var errs []error
	for _, v := range pod.Spec.Volumes {
		if pr := v.Projected; pr != nil {
			for _, src := range pr.Sources {
				if src.ServiceAccountToken != nil && src.ServiceAccountToken.Audience == audience {
					return true, nil
				}
			}
		}
		var (
			driver string
			err    error
		)
		switch {
		case len(v.Ephemeral) > 0 && hasVolumeClaimTemplate(v.Ephemeral):
			driver, err = p.csiDriverOfClaim(ctx, pod.Namespace, pod.Name+"-"+v.Name)
		case v.PersistentVolumeClaim != nil:
			driver, err = p.csiDriverOfClaim(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		case len(v.CSI) > 0:
			driver = rawDriverName(v.CSI)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if driver == "" {
			continue
		}
		has, err := p.csiDriverHasAudience(ctx, driver, audience)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if has {
			return true, nil
		}
	}
	if len(errs) == 0 {
		return false, nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return false, aggregate(msgs)
}

// csiDriverOfClaim follows a claim to its volume's CSI driver ("" for
// another kind of volume).
func (p *NodeRestriction) csiDriverOfClaim(ctx context.Context, namespace, name string) (string, error) {
	if p.Volumes == nil {
		return "", errors.New("NodeRestriction has no volume getter")
	}
	claim, found, err := p.Volumes.GetPersistentVolumeClaim(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	if !found {
		return "", apierrors.NewNotFound(apierrors.GroupResource{Resource: "persistentvolumeclaim"}, name)
	}
	pv, found, err := p.Volumes.GetPersistentVolume(ctx, claim.Spec.VolumeName)
	if err != nil {
		return "", err
	}
	if !found {
		return "", apierrors.NewNotFound(apierrors.GroupResource{Resource: "persistentvolume"}, claim.Spec.VolumeName)
	}
	return rawDriverName(pv.Spec.CSI), nil
}

func (p *NodeRestriction) csiDriverHasAudience(ctx context.Context, name, audience string) (bool, error) {
	if p.Volumes == nil {
		return false, errors.New("NodeRestriction has no volume getter")
	}
	driver, found, err := p.Volumes.GetCSIDriver(ctx, name)
	if err != nil {
		return false, err
	}
	if !found {
		return false, apierrors.NewNotFound(apierrors.GroupResource{Group: "storage.k8s.io", Resource: "csidriver"}, name)
	}
	for _, tr := range driver.Spec.TokenRequests {
		if tr.Audience == audience {
			return true, nil
		}
	}
	return false, nil
}

// rawDriverName reads "driver" from a CSI source kept as raw JSON.
func rawDriverName(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var src struct {
		Driver string `json:"driver"`
	}
	if json.Unmarshal(raw, &src) != nil {
		return ""
	}
	return src.Driver
}

func hasVolumeClaimTemplate(raw json.RawMessage) bool {
	var src struct {
		VolumeClaimTemplate json.RawMessage `json:"volumeClaimTemplate"`
	}
	return json.Unmarshal(raw, &src) == nil && len(src.VolumeClaimTemplate) > 0 && string(src.VolumeClaimTemplate) != "null"
}

func (p *NodeRestriction) admitPod(ctx context.Context, node string, a *Attributes) error {
	switch a.Operation {
	case Create:
		return p.admitMirrorPod(ctx, node, a)
	case Delete:
		old, ok := a.OldObject.(*api.Pod)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
		}
		if old.Spec.NodeName != node {
			return NewForbidden(a, fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", node))
		}
		return nil
	}
	return NewForbidden(a, fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, node))
}

func (p *NodeRestriction) admitMirrorPod(ctx context.Context, node string, a *Attributes) error {
	pod, ok := a.Object.(*api.Pod)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if _, mirror := pod.Annotations[api.MirrorPodAnnotationKey]; !mirror {
		return NewForbidden(a, fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", api.MirrorPodAnnotationKey, node))
	}
	if pod.Spec.NodeName != node {
		return NewForbidden(a, fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", node))
	}
	switch len(pod.OwnerReferences) {
	case 0:
		return NewForbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
	case 1:
	default:
		return NewForbidden(a, fmt.Errorf("node %q can only create pods with a single owner reference set to itself", node))
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != node {
		return NewForbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
	}
	if owner.Controller == nil || !*owner.Controller {
		return NewForbidden(a, fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", node))
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return NewForbidden(a, fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", node))
	}
	if p.Nodes == nil {
		return apierrors.NewInternalError(fmt.Errorf("NodeRestriction has no node getter to verify the owner of a mirror pod"))
	}
	n, found, err := p.Nodes.GetNode(ctx, node)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("error looking up node %s to verify uid: %w", node, err))
	}
	if !found {
		return apierrors.NewNotFound(apierrors.GroupResource{Resource: "nodes"}, node)
	}
	if owner.UID != n.UID {
		return NewForbidden(a, fmt.Errorf("node %s UID mismatch: expected %s got %s", node, owner.UID, n.UID))
	}
	// A mirror pod may not reach objects the node could not read itself.
	resource, err := api.PodAPIObjectReference(pod)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("error checking mirror pod for API references: %w", err))
	}
	if resource != "" {
		return NewForbidden(a, fmt.Errorf("node %q can not create pods that reference %s", node, resource))
	}
	return nil
}

func admitPodStatus(node string, a *Attributes) error {
	if a.Operation != Update {
		return NewForbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, ok := a.OldObject.(*api.Pod)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	if old.Spec.NodeName != node {
		return NewForbidden(a, fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
	}
	pod, ok := a.Object.(*api.Pod)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if !labelsEqual(old.Labels, pod.Labels) {
		return NewForbidden(a, fmt.Errorf("node %q cannot update labels through pod status", node))
	}
	return nil
}

// admitPodEviction: evictions go through the stored pod, which must be
// bound to the node.
func admitPodEviction(node string, a *Attributes) error {
	if a.Operation != Create {
		return NewForbidden(a, fmt.Errorf("unexpected operation %s", a.Operation))
	}
	pod, ok := a.OldObject.(*api.Pod)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	if pod.Spec.NodeName != node {
		return NewForbidden(a, fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", node))
	}
	return nil
}

func admitNode(node string, a *Attributes) error {
	name := a.Name
	if name == "" && a.Object != nil {
		name = a.Object.GetObjectMeta().Name
	}
	if name != node {
		return NewForbidden(a, fmt.Errorf("node %q is not allowed to modify node %q", node, name))
	}
	switch a.Operation {
	case Create:
		n, ok := a.Object.(*api.Node)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, nil)); len(bad) > 0 {
			return NewForbidden(a, fmt.Errorf("node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", ")))
		}
	case Update:
		n, ok := a.Object.(*api.Node)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		old, ok := a.OldObject.(*api.Node)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
		}
		// Its taints keep workloads away; the node may not lift them.
		if !taintsEqual(n.Spec.Taints, old.Spec.Taints) {
			return NewForbidden(a, fmt.Errorf("node %q is not allowed to modify taints", node))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, old.Labels)); len(bad) > 0 {
			return NewForbidden(a, fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", ")))
		}
	case Delete:
		// Kubernetes leaves this to authorization, which grants nodes no
		// delete; refuse here too, whatever RBAC says.
		return NewForbidden(a, fmt.Errorf("node %q is not allowed to delete node %q", node, name))
	}
	return nil
}

func admitLease(node string, a *Attributes) error {
	if a.Namespace != api.NamespaceNodeLease {
		return NewForbidden(a, fmt.Errorf("can only access leases in the %q system namespace", api.NamespaceNodeLease))
	}
	name := a.Name
	if a.Operation == Create {
		lease, ok := a.Object.(*api.Lease)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		name = lease.Name
	}
	if name != node {
		return NewForbidden(a, fmt.Errorf("can only access node lease with the same name as the requesting node"))
	}
	return nil
}

// modifiedLabels returns the keys added, removed or changed between a and b, sorted.
func modifiedLabels(a, b map[string]string) []string {
	set := map[string]bool{}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			set[k] = true
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// forbiddenLabels returns the labels of keys a kubelet may not add, remove
// or change on its Node.
func forbiddenLabels(keys []string) []string {
	var bad []string
	for _, k := range keys {
		ns := labelNamespace(k)
		if ns == LabelNamespaceNodeRestriction || strings.HasSuffix(ns, "."+LabelNamespaceNodeRestriction) {
			bad = append(bad, k)
			continue
		}
		if isKubernetesLabel(ns) && !isKubeletLabel(k, ns) {
			bad = append(bad, k)
		}
	}
	return bad
}

func labelNamespace(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}

func isKubernetesLabel(ns string) bool {
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}

func isKubeletLabel(key, ns string) bool {
	if slices.Contains(kubeletLabels, key) {
		return true
	}
	for _, allowed := range []string{labelNamespaceSuffixKubelet, labelNamespaceSuffixNode} {
		if ns == allowed || strings.HasSuffix(ns, "."+allowed) {
			return true
		}
	}
	return false
}

func labelsEqual(a, b map[string]string) bool {
	return len(a) == len(b) && len(modifiedLabels(a, b)) == 0
}

// taintsEqual compares taints semantically: the same taints in the same
// order, timeAdded compared as instants.
func taintsEqual(a, b []api.Taint) bool {
	return slices.EqualFunc(a, b, func(x, y api.Taint) bool {
		if x.Key != y.Key || x.Value != y.Value || x.Effect != y.Effect || (x.TimeAdded == nil) != (y.TimeAdded == nil) {
			return false
		}
		return x.TimeAdded == nil || x.TimeAdded.Equal(y.TimeAdded.Time)
	})
}
