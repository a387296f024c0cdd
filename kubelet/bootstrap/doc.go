// Package bootstrap gives the kubelet its credentials: the client
// certificate of its node identity (system:node:NAME), obtained once through
// the TLS bootstrap join (pinned CA, bootstrap token, CSR approved and
// signed by the apiserver) and kept in a kubeconfig under the root dir, and
// the self-signed serving certificate of its HTTPS server.
package bootstrap
