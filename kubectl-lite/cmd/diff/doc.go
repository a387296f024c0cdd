// Package diff implements "diff -f": the live objects against what apply
// would make of them, computed by the server with a dry run, written as
// two directories of YAML files and compared by "diff -u -N" (or
// KUBECTL_EXTERNAL_DIFF), with kubectl's exit codes.
package diff
