// Package validation checks API objects the way Kubernetes' apiserver does
// before it stores them: object metadata (names, namespaces, labels,
// annotations, owner references, finalizers), and the spec rules of every
// kind minik8s serves, on create (Validate), on update (ValidateUpdate,
// including immutability) and on writes to the status subresource
// (ValidateStatusUpdate).
//
// Every violation is one field.Error with the field's path and Kubernetes'
// own wording ("spec.containers[0].image: Required value"), so clients and
// tests written against Kubernetes see the same Status causes. Validation
// expects defaulted objects (package defaults), as the apiserver validates
// after defaulting.
package validation
