// Package warning carries the warnings a request earns (from admission
// webhooks and policies) to its response's Warning headers, as
// kube-apiserver's warning recorder does: code 299, agent "-", each text
// once.
package warning
