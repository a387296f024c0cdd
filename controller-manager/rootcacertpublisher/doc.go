// Package rootcacertpublisher is kube's "root-ca-cert-publisher"
// controller: every namespace has the ConfigMap kube-root-ca.crt whose
// ca.crt is the cluster CA (--root-ca-file), so that pods can verify the
// apiserver (the service account volume projects it). A copy that is
// deleted or edited is restored.
package rootcacertpublisher
