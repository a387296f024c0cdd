// Package patch applies and computes the three patch formats of the
// Kubernetes API on JSON documents: JSON merge patch (RFC 7386,
// application/merge-patch+json), JSON patch (RFC 6902,
// application/json-patch+json) and Kubernetes' strategic merge patch
// (application/strategic-merge-patch+json), whose list handling is driven by
// a Schema of patchMergeKey / patchStrategy tags (KubernetesSchema has the
// real tags of the kinds minik8s serves). It also builds the two-way and
// three-way patches that `kubectl apply` sends.
//
// Documents are decoded into map[string]any / []any with integral numbers
// as int64 and others as float64, as Kubernetes does, so int64 fields
// survive a patch exactly. Errors wrap ErrInvalidJSON or ErrInvalidPatch
// (answer 400), ErrCannotApply (422), ErrTooLarge (413) or
// ErrUnsupportedType (415). Apply picks the format by content type.
package patch
