// Package transform answers requests that ask for a resource in another
// shape, kube-apiserver's response transformations: an Accept clause with
// as=Table;g=meta.k8s.io;v=v1 (or v1beta1) gets a meta.k8s.io Table whose
// rows the printers package fills and whose row objects includeObject
// chooses (None, Metadata — the default — or Object);
// as=PartialObjectMetadata and as=PartialObjectMetadataList get the objects
// reduced to their metadata, which metadata informers (the garbage
// collector, quota) list and watch.
//
// It works on the JSON the server writes anyway: a Converter turns one
// object, one list or one watch event line into the JSON of the shape
// asked for, and the server then encodes that as the negotiated media type
// (JSON, YAML, or protobuf for metadata). Which Accept clause wins is the
// server's negotiation; Allows is the rule it asks about a transformation.
package transform
