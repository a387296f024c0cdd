package main

import (
	"bytes"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/minik8s/minik8s/scheduler/scheduling
cpu: Intel(R) Xeon(R) Processor
--- FAIL: BenchmarkSchedulingThroughput/defaults_qps=50_burst=100
    bench_test.go:130: created 200 nodes in 102ms
    bench_test.go:328: the scheduler stopped leading
BenchmarkSchedulingThroughput/tuned_qps=1000_burst=2000-2         	       1	4852840715 ns/op	       833.4 backlog_pods/s	      1301 pods/s
--- BENCH: BenchmarkSchedulingThroughput/tuned_qps=1000_burst=2000-2
    bench_test.go:130: created 200 nodes in 100ms
--- FAIL: BenchmarkSchedulingThroughput
FAIL
exit status 1
FAIL	github.com/minik8s/minik8s/scheduler/scheduling	141.006s
pkg: github.com/minik8s/minik8s/apiserver/integration
BenchmarkPodCreate/https-rbac-h2/clients=1-2         	     500	   2000000 ns/op	       500.0 creates/s	      1600 cpu-µs/op
BenchmarkPodCreate/https-rbac-h2/clients=64-2        	    2000	    500000 ns/op	      2000 creates/s	       800.0 cpu-µs/op
BenchmarkPodCreate/insecure-no-auth-http1/clients=1-2	    1000	   1000000 ns/op	      1000 creates/s	       800.0 cpu-µs/op
BenchmarkPodCreate/insecure-no-auth-http1/clients=64-2	    3000	    333333 ns/op	      3000 creates/s	       400.0 cpu-µs/op
BenchmarkNew-2   	     100	  12345678 ns/op
ok  	github.com/minik8s/minik8s/apiserver/integration	60.1s
--- SKIP: BenchmarkPodStartup
    harness_test.go:61: kubelet integration tests need root
PASS
ok  	github.com/minik8s/minik8s/kubelet/pods	0.05s
`

func TestParse(t *testing.T) {
	run, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		pkg, name string
		rows      []string // name status reason-or-metric-count
	}
	got := map[string][]string{}
	pkgs := map[string]string{}
	for _, b := range run.Benches {
		pkgs[b.Name] = b.Pkg
		for _, r := range b.rows() {
			got[b.Name] = append(got[b.Name], r.Name+"|"+r.Status+"|"+r.Reason+"|"+strings.Repeat("m", len(r.Metrics)))
		}
	}
	for _, tt := range []want{
		{"github.com/minik8s/minik8s/scheduler/scheduling", "BenchmarkSchedulingThroughput", []string{
			"defaults_qps=50_burst=100|FAIL|the scheduler stopped leading|",
			"tuned_qps=1000_burst=2000|||mmm",
		}},
		{"github.com/minik8s/minik8s/apiserver/integration", "BenchmarkPodCreate", []string{
			"https-rbac-h2/clients=1|||mmm", "https-rbac-h2/clients=64|||mmm",
			"insecure-no-auth-http1/clients=1|||mmm", "insecure-no-auth-http1/clients=64|||mmm",
		}},
		{"github.com/minik8s/minik8s/apiserver/integration", "BenchmarkNew", []string{"|||m"}},
		{"github.com/minik8s/minik8s/kubelet/pods", "BenchmarkPodStartup", []string{"|SKIP|kubelet integration tests need root|"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if pkgs[tt.name] != tt.pkg {
				t.Errorf("pkg %q, want %q", pkgs[tt.name], tt.pkg)
			}
			if strings.Join(got[tt.name], "\n") != strings.Join(tt.rows, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got[tt.name], "\n"), strings.Join(tt.rows, "\n"))
			}
		})
	}
	if run.OK() {
		t.Error("OK() with a failed row and package")
	}
	if len(run.Failed) != 1 || run.Failed[0] != "github.com/minik8s/minik8s/scheduler/scheduling" {
		t.Errorf("Failed = %q", run.Failed)
	}
}

func TestPrintRatios(t *testing.T) {
	run, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	run.Print(&out)
	for _, want := range []string{
		// Compared with the first row of the same clients= element.
		"insecure-no-auth-http1/clients=64  https-rbac-h2/clients=64  3000 (1.50x)  400 (0.5x)",
		"insecure-no-auth-http1/clients=1   https-rbac-h2/clients=1   1000 (2.00x)  800 (0.5x)",
		"tuned_qps=1000_burst=2000  defaults_qps=50_burst=100  833",
		"FAIL defaults_qps=50_burst=100: the scheduler stopped leading",
		"SKIP -: kubelet integration tests need root",
		"12345678", // ns/op stays when it is the only figure
		"FAILED: github.com/minik8s/minik8s/scheduler/scheduling",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		// The first row of its clients= group is a baseline itself.
		if strings.Contains(line, "https-rbac-h2/clients=64") && !strings.Contains(line, "insecure") && strings.Contains(line, "x)") {
			t.Errorf("baseline row with a ratio: %q", line)
		}
	}
	if strings.Contains(out.String(), "4852840715") {
		t.Errorf("ns/op shown beside the benchmark's own figures:\n%s", out.String())
	}
}

// verbose is go test -v -bench output: a row's messages come before its
// --- line, and a failed row's before the package's pkg: line never.
const verbose = `--- FAIL: BenchmarkEarly/bad
    x_test.go:8: failed before the header
goos: linux
goarch: amd64
pkg: fmtcheck
cpu: Intel(R) Xeon(R) Processor
BenchmarkSkip
    x_test.go:5: needs root
    x_test.go:5: more
--- SKIP: BenchmarkSkip
BenchmarkEarly/good-2        	       1	     15038 ns/op	         3.000 x/s
BenchmarkRows
BenchmarkRows/bad
    x_test.go:8: setup
    x_test.go:8: it broke
--- FAIL: BenchmarkRows/bad
BenchmarkRows/good
    x_test.go:10: hello
BenchmarkRows/good-2        	       1	     15038 ns/op	         3.000 x/s
--- FAIL: BenchmarkRows
FAIL
exit status 1
FAIL	fmtcheck	0.009s
FAIL
`

func TestParseVerbose(t *testing.T) {
	run, err := Parse(strings.NewReader(verbose))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range run.Benches {
		for _, r := range b.rows() {
			got = append(got, b.Pkg+" "+b.Name+"/"+r.Name+"|"+r.Status+"|"+r.Reason+"|"+strings.Repeat("m", len(r.Metrics)))
		}
	}
	want := []string{
		"fmtcheck BenchmarkEarly/bad|FAIL|failed before the header|",
		"fmtcheck BenchmarkEarly/good|||mm",
		"fmtcheck BenchmarkSkip/|SKIP|needs root|",
		"fmtcheck BenchmarkRows/bad|FAIL|it broke|",
		"fmtcheck BenchmarkRows/good|||mm",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRunOK(t *testing.T) {
	run, err := Parse(strings.NewReader("pkg: p\nBenchmarkA-2  1  5 ns/op  3 x/s\nPASS\nok  \tp\t1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !run.OK() {
		t.Error("not OK")
	}
}
