// Package serviceaccount is kube's "serviceaccount" controller: every
// active namespace has a ServiceAccount named "default", created when the
// namespace appears and again whenever it is deleted. It only creates;
// a ServiceAccount that exists is left as its owner wrote it.
package serviceaccount
