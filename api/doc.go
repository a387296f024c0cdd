// Package api holds the minik8s API types: the Kubernetes objects the cluster
// serves (core/v1, apps/v1, batch/v1, coordination.k8s.io/v1,
// discovery.k8s.io/v1, rbac.authorization.k8s.io/v1, certificates.k8s.io/v1)
// with the same JSON field names as Kubernetes, plus the
// object metadata, list, Status and watch-event envelopes shared by every
// component. CustomResourceDefinitions (apiextensions.k8s.io/v1) keep their
// schemas as raw JSON, and objects of custom resources are CustomObjects:
// typed metadata, everything else in Kubernetes' unstructured form. It
// imports nothing else from this module.
package api
