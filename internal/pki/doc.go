// Package pki is the cluster's certificate authority and the credentials it
// hands out: a self-signed CA, the apiserver's serving certificate, client
// certificates whose subject is the identity (CN = user name, O = groups, as
// kube-apiserver reads them), signing of certificate signing requests filed
// by joining kubelets, kubeadm-style CA public-key pins
// ("sha256:<hex of the SubjectPublicKeyInfo hash>") and bootstrap tokens in
// Kubernetes' format and Secret shape.
//
// Every key this package generates is ECDSA P-256. It is generated in
// microseconds where RSA 2048 takes tens to hundreds of milliseconds with a
// long tail (that matters on a small machine where tests issue dozens of
// certificates), gives smaller certificates and handshakes, offers more
// security per bit than RSA 2048, and every client we care about (Go's TLS,
// kubectl, curl/OpenSSL) supports it; kubeadm offers the same choice and the
// kubelet's own CSRs use P-256. Keys read from disk may also be RSA, so a CA
// made by other tools can be loaded.
//
// EnsureServing is what the apiserver calls on start: it creates the CA,
// serving and admin credentials in --cert-dir on first start and reuses them
// later, re-issuing only what is missing, invalid or lacks a required name.
// Its serving chain carries the CA, so a joining kubelet that knows only the
// CA hash can learn the CA from the TLS handshake itself (FetchPinnedCA).
// EnsureEtcd does the same for the embedded etcd in kubeadm's layout
// (etcd/ca, etcd/server, etcd/peer, etcd/healthcheck-client and
// apiserver-etcd-client under the same directory), with an etcd CA of its
// own so that no cluster credential opens etcd.
package pki
