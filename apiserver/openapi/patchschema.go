package openapi

import "github.com/minik8s/minik8s/api/patch"

// kubernetesPatchSchema gives the strategic-merge metadata of a kind's list
// fields: api/patch's table, the one the apiserver patches with, so the
// documents and the server agree.
func kubernetesPatchSchema(kind string) patchSchema {
	s := patch.KubernetesSchema(kind)
	if s == nil {
		return nil
	}
	return s
}
