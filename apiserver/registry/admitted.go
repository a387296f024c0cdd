package registry

import "github.com/minik8s/minik8s/api"

// AdmissionDecoder is implemented by kinds whose decoding does more than
// the built-in defaults (custom resources): DecodeAdmitted does it again
// to an object a mutating admission webhook patched, before the object is
// validated and stored, as kube-apiserver decodes a webhook's result
// through the kind's converter and defaulter. An object of another kind
// (a subresource's, such as a Scale) is left as it is.
type AdmissionDecoder interface {
	DecodeAdmitted(obj api.Object)
}
