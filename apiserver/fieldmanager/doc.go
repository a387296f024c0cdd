// Package fieldmanager is server-side apply and the managedFields
// bookkeeping behind it, done by the library kube-apiserver uses:
// k8s.io/apimachinery's managedfields (on sigs.k8s.io/structured-merge-diff),
// with the same manager chain (last-applied migration, before-first-apply,
// capped update managers, version check) and the same conflict errors.
//
// The merge is driven by the OpenAPI v3 schemas the apiserver publishes
// (list types, map keys, key defaults), turned into a type converter once
// at startup. Objects cross into the library at one seam: an api.Object is
// encoded to JSON and decoded as unstructured content, and results come
// back the same way. No other package imports managedfields or
// structured-merge-diff; the registry asks this one for Update (every
// write but apply) and Apply.
package fieldmanager
