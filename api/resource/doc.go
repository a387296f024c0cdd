// Package resource implements Quantity, the fixed-point number Kubernetes
// uses for CPU, memory and other resource amounts ("100m", "1.5Gi", "1e3").
//
// Parsing, canonical printing, rounding and comparison follow
// k8s.io/apimachinery/pkg/api/resource: a parsed value keeps the kind of
// suffix it was written with (binary, decimal or exponent) and is printed
// in canonical form ("1.5Gi" prints as "1536Mi", "0.1" as "100m"); values
// are exact (never floating point), and anything finer than a nano unit is
// rounded up to 1n. Arithmetic uses int64 while it fits and math/big
// beyond, so comparisons are exact at any magnitude. A Quantity is a value
// type: copies never share mutable state.
package resource
