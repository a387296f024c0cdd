// Package openapi generates and serves the apiserver's OpenAPI documents in
// kube-apiserver's shapes: Swagger 2.0 at /openapi/v2 (JSON, or protobuf for
// client-go's discovery.OpenAPISchema) and OpenAPI 3.0 at /openapi/v3, a
// discovery document that points at one hashed, immutable document per
// group-version (/openapi/v3/api/v1?hash=..., /openapi/v3/apis/apps/v1?hash=...).
//
// The schemas come from reflection over the Go types in package api, walked
// the way encoding/json walks them (json tags, omitempty/omitzero, inlined
// embedded structs), with Kubernetes' definition names
// (io.k8s.api.core.v1.Pod, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta),
// its schemas for the types with custom JSON (Time, IntOrString, Quantity,
// ...) and the strategic-merge-patch metadata of api/patch on list fields, so
// kubectl can validate against and patch with them. The paths are the REST
// paths the apiserver serves, with Kubernetes' operation ids, actions and
// group-version-kind extensions.
//
// Everything is generated once, at startup, by New; the handlers serve cached
// bytes with ETags.
package openapi
