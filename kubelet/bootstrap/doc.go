// Package bootstrap gives the kubelet its credentials: the client
// certificate of its node identity (system:node:NAME), obtained once through
// the TLS bootstrap join (pinned CA, bootstrap token, CSR approved and
// signed by the apiserver) and kept in a kubeconfig under the root dir, and
// the serving certificate of its HTTPS server: self-signed
// (EnsureServingCert), or with --rotate-server-certificates requested from
// the kubernetes.io/kubelet-serving signer for the Node's addresses and
// renewed before it expires (ServingManager), the self-signed one served
// until the first is issued.
package bootstrap
