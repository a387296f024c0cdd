// Package crd serves CustomResourceDefinitions (apiextensions.k8s.io/v1)
// and the custom resources they define, with k8s.io/apiextensions-apiserver
// as the library behind it (this is the one package that imports it):
//
//   - Strategy is the CRD kind's registry strategy: kube's defaults, its
//     validation (names, group, versions, one storage version, structural
//     schemas, CEL rules that compile), storedVersions, and the cleanup
//     finalizer and Terminating condition a deletion starts with.
//   - Controller watches the CRDs: it decides NamesAccepted and
//     Established (names that clash with another CRD's are not accepted,
//     and the condition says which), serves each served version of an
//     established CRD through a registry.Store of its own (etcd keys
//     GROUP/RESOURCE/..., a watch cache, kube's custom resource strategy
//     for pruning, defaulting, OpenAPI schema validation and CEL rules,
//     tables from additionalPrinterColumns, server-side apply with a type
//     converter made from the schema), publishes the versions' OpenAPI v2
//     and v3 documents, and deletes a deleted CRD's objects before it
//     lifts the finalizer.
//
// The server finds the served custom resources through the Controller
// (server.CustomResources); custom resources are JSON only, as in Kubernetes.
package crd
