package crd

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/registry"
)

var _ registry.AdmissionDecoder = (*resourceStrategy)(nil)

// DecodeAdmitted prunes what a mutating webhook added that the schema
// does not declare and sets the schema's defaults, as kube-apiserver's
// schema-coercing converter and structural defaulter do to the object a
// webhook patched: the webhook cannot store what a client could not.
func (s *resourceStrategy) DecodeAdmitted(obj api.Object) {
	if _, ok := obj.(*api.CustomObject); !ok {
		return
	}
	u := toUnstructured(obj)
	s.pruneAndDefault(u)
	fromUnstructured(u, obj)
}
