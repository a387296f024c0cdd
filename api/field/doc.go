// Package field describes field paths inside API objects and the validation
// errors reported against them, in Kubernetes' shapes and wording
// ("spec.containers[0].image: Required value").
package field
