// Package csr approves and signs kubelet client certificate requests inside
// the apiserver: a CertificateSigningRequest for the
// kubernetes.io/kube-apiserver-client-kubelet signer, asking for
// CN=system:node:NAME, O=system:nodes, from a requester the authorizer allows
// to create certificatesigningrequests/nodeclient (bootstrap tokens) or
// /selfnodeclient (a node renewing itself), is approved; every approved
// request for the kubelet or kube-apiserver-client signers is signed by the
// cluster CA. This is Kubernetes' csrapproving and csrsigning controllers.
package csr
