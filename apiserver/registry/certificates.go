package registry

import "github.com/minik8s/minik8s/api"

// podCertificateRequestStrategy: PodCertificateRequests are listed and
// watched by signer (a signer's controller), pod and node (a kubelet's
// own), as kube's field label conversion allows. The status is the
// signer's, through /status (api/validation checks the issuance).
type podCertificateRequestStrategy struct{ BaseStrategy }

// Fields implements Strategy.
func (podCertificateRequestStrategy) Fields(obj api.Object) map[string]string {
	s := &obj.(*api.PodCertificateRequest).Spec
	return map[string]string{"spec.signerName": s.SignerName, "spec.podName": s.PodName, "spec.nodeName": s.NodeName}
}

// clusterTrustBundleStrategy: ClusterTrustBundles are selectable by
// signer, as kube's.
type clusterTrustBundleStrategy struct{ BaseStrategy }

// Fields implements Strategy.
func (clusterTrustBundleStrategy) Fields(obj api.Object) map[string]string {
	return map[string]string{"spec.signerName": obj.(*api.ClusterTrustBundle).Spec.SignerName}
}
