// Package token is the kubelet's service account token manager, as kube's
// pkg/kubelet/token: it asks the TokenRequest API
// (serviceaccounts/NAME/token) for tokens bound to a pod, caches them, and
// asks again once 80% of a token's lifetime has passed or it is 24 hours
// old (with up to 10 s of jitter), so projected volumes rewritten
// periodically always hold a fresh token. If a refresh fails, the cached
// token is used until it expires.
package token
