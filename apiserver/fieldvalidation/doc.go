// Package fieldvalidation answers a write's fieldValidation query
// parameter (Strict, Warn, Ignore; Warn when absent) as kube-apiserver
// v1.37 does. It finds the fields of a request body that the kind does not
// know and the fields given twice, and words them as kube's strict decoder
// does (`unknown field "spec.foo"`, `duplicate field "spec.replicas"`, a
// YAML body's `line 8: key "replicas" already set in map`), in the order
// kube finds them.
//
// A built-in kind's fields are those of Kubernetes' own Go type for its
// group, version and kind (k8s.io/api, the apiextensions and
// kube-aggregator types): the body is decoded into that type the way
// kube-apiserver decodes it, so the check is kube's even where the served
// Go types of package api lack a field (TestEveryKindFieldParity lists
// those). Custom resources find their unknown fields from their schema
// (apiserver/crd); this package then adds the duplicates. Protobuf bodies
// carry no unknown or duplicate fields and are not checked.
//
// The registry and the HTTP handlers decide where the errors go: Strict
// makes them the request's error (Message), Warn makes them Warning
// headers (Warnings), Ignore drops them.
package fieldvalidation
