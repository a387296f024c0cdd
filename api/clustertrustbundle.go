package api

// certificates.k8s.io/v1 ClusterTrustBundles, with every field of
// k8s.io/api v0.37.2.

// ClusterTrustBundle is a cluster-scoped container for X.509 trust anchors
// (root certificates).
type ClusterTrustBundle struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ClusterTrustBundleSpec `json:"spec"`
}

// ClusterTrustBundleSpec contains the signer and trust anchors.
type ClusterTrustBundleSpec struct {
	SignerName  string `json:"signerName,omitempty"`
	TrustBundle string `json:"trustBundle"`
}
