// Package podcertificate is the kubelet's pod certificate manager, as
// kube's pkg/kubelet/podcertificate: for each podCertificate source of a
// pod's projected volume it generates a private key of the asked type,
// creates a PodCertificateRequest (certificates.k8s.io/v1) naming the pod,
// its service account and the node, with a stub PKCS#10 request signed by
// the key as proof of possession, and hands the key and the issued chain
// to the volume once the signer has written them in the request's status.
// From the request's beginRefreshAt on it asks again with a new key, and
// serves the previous credentials until the new ones are issued. A denied
// or failed request is permanent for the pod (a Warning event says why).
//
// The manager is driven by the kubelet's volume set-up: each call reads
// the pending request again, so a pod waiting for its certificate is
// retried by its pod worker, as one waiting for a missing config map.
package podcertificate
