package openapi

// kubernetesPatchSchema gives the strategic-merge metadata of a kind's list
// fields. It is wired to api/patch's KubernetesSchema once that package
// lands; until then, nil: the documents carry no patch extensions.
var kubernetesPatchSchema func(kind string) patchSchema
