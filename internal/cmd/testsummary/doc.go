// Command testsummary runs `go test -json` and prints what a plain
// `go test ./...` prints (an "ok" line per passing package, the output of
// failing tests and packages), then a summary nobody can miss: every
// skipped test with its reason, grouped by package and reason, and every
// failed test. A suite that needs root or containerd and skipped shows up
// there instead of passing silently. It exits with go test's status (1 when
// a failure was reported and go test still exited 0).
//
//	testsummary go test -count=1 -json ./...
package main
