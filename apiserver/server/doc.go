// Package server is the apiserver's HTTP layer (go-chi): it routes
// Kubernetes paths (/api/v1/..., /apis/GROUP/VERSION/...) to the registry,
// negotiates JSON, YAML and protobuf bodies and answers as kube-apiserver
// does (negotiate.go; protobuf through package protobuf; tables and
// metadata-only answers, as=Table and as=PartialObjectMetadata, through
// package transform, transform.go), bounds request
// sizes, streams watches, writes every failure as a Kubernetes Status, and
// serves discovery, /version, /healthz, /livez, /readyz and /metrics.
// HandlerChain puts every filter a request passes around the routes, in one
// place and in kube-apiserver's order.
package server
