// Package authn authenticates apiserver requests the way kube-apiserver does:
// x509 client certificates signed by the cluster CA (CN = user, O = groups),
// bearer tokens from a static token file (--token-auth-file) and bootstrap
// tokens stored as kube-system Secrets. Authenticators are combined with
// Union; Filter runs one in front of the handlers, puts the user into the
// request context and answers 401 with a Kubernetes Status otherwise.
//
// Each Authenticator answers one of three ways: ok (a user), not ok without
// error (this kind of credential is absent, so another may apply) or an
// error (credentials of this kind are present but invalid, which is a 401
// even where anonymous access is allowed, as in Kubernetes). The client only
// ever sees "Unauthorized"; the reason is logged, never sent, so a probe
// learns nothing about which tokens exist.
package authn
