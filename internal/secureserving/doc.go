// Package secureserving is how the scheduler and the controller-manager
// serve their /healthz, /readyz, /livez and /metrics, as
// kube-scheduler and kube-controller-manager do since the insecure port
// went away: HTTPS on --secure-port (--bind-address, --tls-cert-file and
// --tls-private-key-file, or a self-signed certificate kept in --cert-dir
// or in memory), every request authenticated and authorized by delegating
// to the apiserver.
//
// Authentication (k8s.io/apiserver's DelegatingAuthenticationOptions): a
// client certificate signed by --client-ca-file (or, unless
// --authentication-skip-lookup, by the client-ca-file of kube-system's
// extension-apiserver-authentication ConfigMap), else a bearer token the
// apiserver vouches for in a TokenReview (--authentication-kubeconfig;
// answers kept --authentication-token-webhook-cache-ttl), else the
// anonymous user. A certificate or token that does not check out is 401.
//
// Authorization (DelegatingAuthorizationOptions): system:masters and the
// --authorization-always-allow-paths (default /healthz, /readyz, /livez)
// pass; every other request is a SubjectAccessReview of its path and
// lower-cased method (--authorization-kubeconfig; allowed answers kept
// --authorization-webhook-cache-authorized-ttl, refusals
// --authorization-webhook-cache-unauthorized-ttl). A refusal is 403 with
// kube's Status; without an authorization kubeconfig everything else is
// refused.
//
// Not implemented: request-header (front proxy) authentication, which
// these components take from the same ConfigMap, and the flags kube has
// for TLS ciphers, curves, SNI certificates and HTTP/2; every request is
// authorized as a non-resource path.
package secureserving
