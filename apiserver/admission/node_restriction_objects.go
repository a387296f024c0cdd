package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
)

// The objects the Node authorizer lets a kubelet create or write whatever
// their content, NodeRestriction checks: claims' status, its CSINode, its
// ResourceSlices and its PodCertificateRequests (Kubernetes'
// admitPVCStatus, admitCSINode, admitResourceSlice and
// admitPodCertificateRequest).

// admitPVCStatus: a kubelet may change only a claim's status.capacity,
// status.conditions and the expansion recovery fields
// (RecoverVolumeExpansionFailure is on in v1.37).
func admitPVCStatus(node string, a *Attributes) error {
	if a.Subresource != "status" {
		return NewForbidden(a, errors.New("may only update PVC status"))
	}
	if a.Operation != Update {
		return NewForbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	oldPVC, ok := a.OldObject.(*api.PersistentVolumeClaim)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	newPVC, ok := a.Object.(*api.PersistentVolumeClaim)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	strip := func(c api.PersistentVolumeClaim) api.PersistentVolumeClaim {
		c.ResourceVersion = ""
		c.ManagedFields = nil
		c.Status.Capacity = nil
		c.Status.Conditions = nil
		c.Status.AllocatedResourceStatuses = nil
		c.Status.AllocatedResources = nil
		return c
	}
	before, errOld := json.Marshal(strip(*oldPVC))
	after, errNew := json.Marshal(strip(*newPVC))
	if err := errors.Join(errOld, errNew); err != nil {
		return apierrors.NewInternalError(err)
	}
	if string(before) != string(after) {
		return NewForbidden(a, fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions: %s -> %s", node, before, after))
	}
	return nil
}

// admitCSINode: only the node's own CSINode; its status needs
// CSIVolumeHealth, off by default in v1.37.
func admitCSINode(node string, a *Attributes) error {
	name := a.Name
	if a.Operation == Create {
		if a.Object == nil {
			return NewForbidden(a, errors.New("unable to access the object name"))
		}
		name = a.Object.GetObjectMeta().Name
	}
	if name != node {
		return NewForbidden(a, errors.New("can only access CSINode with the same name as the requesting node"))
	}
	if a.Subresource == "status" {
		return NewForbidden(a, errors.New("CSIVolumeHealth feature gate is disabled"))
	}
	return nil
}

// admitResourceSlice: slices are created and deleted only with the node's
// name in spec.nodeName (a deletecollection is admitted slice by slice).
func admitResourceSlice(node string, a *Attributes) error {
	switch a.Operation {
	case Create:
		slice, ok := a.Object.(*api.ResourceSlice)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		if slice.Spec.NodeName == nil || *slice.Spec.NodeName != node {
			return NewForbidden(a, errors.New("can only create ResourceSlice with the same NodeName as the requesting node"))
		}
	case Delete:
		slice, ok := a.OldObject.(*api.ResourceSlice)
		if !ok {
			return NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
		}
		if slice.Spec.NodeName == nil || *slice.Spec.NodeName != node {
			return NewForbidden(a, errors.New("can only delete ResourceSlice with the same NodeName as the requesting node"))
		}
	}
	return nil
}

// requestSignerVerb is the verb an authorizer must allow a node, on the
// signer name (slashes as colons) as resource, for a signer its pod does
// not mount a podCertificate volume of.
const requestSignerVerb = "request-serviceaccounts-podcertificate-signer"

// admitPodCertificateRequest: a kubelet asks certificates only for a
// running, non-mirror pod bound to it, under the pod's own service
// account, for a signer the pod mounts (or the authorizer allows). UID
// mismatches that informer lag can explain are not Forbidden, so the
// kubelet retries.
func (p *NodeRestriction) admitPodCertificateRequest(ctx context.Context, node string, a *Attributes) error {
	if a.Operation != Create {
		return NewForbidden(a, fmt.Errorf("unexpected operation %v", a.Operation))
	}
	if a.Subresource != "" {
		return NewForbidden(a, fmt.Errorf("unexpected subresource %v", a.Subresource))
	}
	req, ok := a.Object.(*api.PodCertificateRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	ns, spec := a.Namespace, req.Spec
	podKey := ns + "/" + spec.PodName
	if spec.NodeName != node {
		return NewForbidden(a, fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", spec.NodeName, node))
	}
	if p.Nodes == nil || p.Pods == nil || p.ServiceAccounts == nil {
		return apierrors.NewInternalError(errors.New("NodeRestriction has no node, pod or service account getter to verify a PodCertificateRequest"))
	}
	n, found, err := p.Nodes.GetNode(ctx, spec.NodeName)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", spec.NodeName, err))
	}
	if !found {
		return apierrors.NewInternalError(fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", spec.NodeName,
			apierrors.NewNotFound(apierrors.GroupResource{Resource: "node"}, spec.NodeName)))
	}
	if n.UID != spec.NodeUID {
		return apierrors.NewInternalError(fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", podKey, spec.NodeUID, n.UID))
	}
	pod, err := p.Pods.GetPod(ctx, ns, spec.PodName)
	if apierrors.IsNotFound(err) {
		return apierrors.NewInternalError(fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", podKey, err))
	}
	if err != nil {
		return NewForbidden(a, fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", podKey, err))
	}
	if spec.PodUID != pod.UID {
		return apierrors.NewInternalError(fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", podKey, spec.PodUID, pod.UID))
	}
	if pod.Spec.NodeName != spec.NodeName {
		return NewForbidden(a, fmt.Errorf("pod %q is not running on node %q named in the PodCertificateRequest", podKey, spec.NodeName))
	}
	if _, mirror := pod.Annotations[api.MirrorPodAnnotationKey]; mirror {
		return NewForbidden(a, fmt.Errorf("pod %q is a mirror pod", podKey))
	}
	if spec.ServiceAccountName != pod.Spec.ServiceAccountName {
		return NewForbidden(a, fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", podKey, spec.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	sa, err := p.ServiceAccounts.GetServiceAccount(ctx, ns, spec.ServiceAccountName)
	if apierrors.IsNotFound(err) {
		return apierrors.NewInternalError(fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", ns+"/"+spec.ServiceAccountName, err))
	}
	if err != nil {
		return NewForbidden(a, fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", ns+"/"+spec.ServiceAccountName, err))
	}
	if spec.ServiceAccountUID != sa.UID {
		return apierrors.NewInternalError(fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", podKey, spec.ServiceAccountUID, sa.UID))
	}
	if podMountsSigner(pod, spec.SignerName) {
		return nil
	}
	if p.Authorizer == nil {
		return NewForbidden(a, fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: no authorizer", a.User.Name, spec.SignerName))
	}
	d, _, err := p.Authorizer.Authorize(ctx, authz.Attributes{User: a.User, Verb: requestSignerVerb,
		APIGroup: a.Resource.Group, APIVersion: a.Resource.Version, Resource: strings.ReplaceAll(spec.SignerName, "/", ":"),
		Namespace: ns, Name: spec.ServiceAccountName, IsResourceRequest: true})
	if d == authz.Allow {
		return nil
	}
	if err != nil {
		return NewForbidden(a, fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", a.User.Name, spec.SignerName, err))
	}
	return NewForbidden(a, fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", podKey, spec.SignerName))
}

// podMountsSigner reports whether a projected volume of pod holds a
// podCertificate source for signer.
func podMountsSigner(pod *api.Pod, signer string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.PodCertificate != nil && src.PodCertificate.SignerName == signer {
				return true
			}
		}
	}
	return false
}
