// Package csr approves and signs certificate requests inside the
// apiserver, as Kubernetes' csrapproving and csrsigning controllers do in
// kube-controller-manager. A CertificateSigningRequest for the
// kubernetes.io/kube-apiserver-client-kubelet signer of exactly a kubelet
// client's shape (CN=system:node:NAME, O=system:nodes, client usages, no
// subject alternative name), from a requester the authorizer allows to
// create certificatesigningrequests/selfnodeclient (a node renewing
// itself) or /nodeclient (bootstrap tokens), is approved. A request for
// the kubernetes.io/kubelet-serving signer is approved only with
// --approve-kubelet-serving-certificates (Controller.ApproveServing),
// minik8s' stand-in for the approver add-on Kubernetes leaves this to:
// filed by the node itself, for CN=system:node:NAME, with every DNS and IP
// subject alternative name one of the Node's status.addresses; a node's
// request that claims anything else is Denied with the reason, and
// anyone else's is left for an administrator. An approved request for
// the kubelet client, kubelet serving or kube-apiserver-client signer is
// signed by the cluster CA when it has the shape that signer issues, and
// marked Failed (SignerValidationFailure) otherwise, never signed:
// approval says the requester may have a certificate, the signer decides
// what kind. Who may approve or sign for which signer at all is the
// admission plugins' business (apiserver/admission: CertificateApproval,
// CertificateSigning, CertificateSubjectRestriction).
package csr
