// Command benchsummary reads the output of `go test -bench` (one or more
// files, or stdin) and prints one summary: per benchmark, a table of its
// rows (sub-benchmarks) and their metrics, each figure of a row beside its
// ratio to the row it is compared with, and the rows that failed or were
// skipped with the reason their benchmark gave. `make bench` runs it after
// the benchmarks. It exits non-zero when a benchmark or a package failed,
// so the summary also says whether the run is whole.
//
// A row is compared with the first row of its benchmark whose last name
// element is the same ("https-rbac-http1/clients=64" with
// "https-rbac-h2/clients=64"), or else with the benchmark's first row
// ("tuned_qps=1000_burst=2000" with "defaults_qps=50_burst=100"): the
// benchmarks list their baseline row first.
package main
