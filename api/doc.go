// Package api holds the minik8s API types: the Kubernetes objects the cluster
// serves (core/v1, apps/v1, batch/v1, coordination.k8s.io/v1,
// discovery.k8s.io/v1, rbac.authorization.k8s.io/v1, certificates.k8s.io/v1)
// with the same JSON field names as Kubernetes, plus the
// object metadata, list, Status and watch-event envelopes shared by every
// component. CustomResourceDefinitions (apiextensions.k8s.io/v1) keep their
// schemas as raw JSON, and objects of custom resources are CustomObjects:
// typed metadata, everything else in Kubernetes' unstructured form. It
// imports nothing else from this module.
//
// kinds.go is the table of kinds: one entry per served kind (group,
// version, kind, resource, scope, short names, categories, subresources),
// from which the apiserver builds its stores, discovery and OpenAPI
// documents and clients resolve names. Adding a kind is its Go type in the
// file of its group, one entry appended to Resources, its defaults in
// api/defaults and its validation in api/validation; the apiserver needs an
// entry in apiserver/registry/kinds.go only for rules of its own (a
// strategy, a storage version) and one in apiserver/printers for kubectl
// columns other than the default Name and Created At.
package api
