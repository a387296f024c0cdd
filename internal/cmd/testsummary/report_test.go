package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func stream(t *testing.T, evs ...event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func out(pkg, test, text string) event {
	return event{Action: "output", Package: pkg, Test: test, Output: text}
}

func TestReport(t *testing.T) {
	const a, b, c = "example/a", "example/b", "example/c"
	in := stream(t,
		event{Action: "start", Package: a},
		event{Action: "run", Package: a, Test: "TestOK"},
		out(a, "TestOK", "=== RUN   TestOK\n"),
		out(a, "TestOK", "    a_test.go:3: chatter of a passing test\n"),
		out(a, "TestOK", "--- PASS: TestOK (0.00s)\n"),
		event{Action: "pass", Package: a, Test: "TestOK"},
		event{Action: "run", Package: a, Test: "TestRoot"},
		out(a, "TestRoot", "=== RUN   TestRoot\n"),
		out(a, "TestRoot", "    kill_test.go:68: needs root\n"),
		out(a, "TestRoot", "--- SKIP: TestRoot (0.00s)\n"),
		event{Action: "skip", Package: a, Test: "TestRoot"},
		event{Action: "run", Package: a, Test: "TestRoot2"},
		out(a, "TestRoot2", "    app_test.go:9: needs root\n"),
		event{Action: "skip", Package: a, Test: "TestRoot2"},
		out(a, "", "PASS\n"),
		out(a, "", "ok  \texample/a\t0.01s\n"),
		event{Action: "pass", Package: a},

		event{Action: "run", Package: b, Test: "TestBroken"},
		event{Action: "run", Package: b, Test: "TestBroken/sub"},
		out(b, "TestBroken/sub", "=== RUN   TestBroken/sub\n"),
		out(b, "TestBroken/sub", "    b_test.go:7: got 1, want 2\n"),
		out(b, "TestBroken/sub", "    --- FAIL: TestBroken/sub (0.00s)\n"),
		event{Action: "fail", Package: b, Test: "TestBroken/sub"},
		out(b, "TestBroken", "--- FAIL: TestBroken (0.00s)\n"),
		event{Action: "fail", Package: b, Test: "TestBroken"},
		out(b, "", "FAIL\n"),
		out(b, "", "FAIL\texample/b\t0.02s\n"),
		event{Action: "fail", Package: b},

		event{Action: "build-output", ImportPath: c + " [example/c.test]", Output: "c/x_test.go:3:1: syntax error\n"},
		event{Action: "build-fail", ImportPath: c + " [example/c.test]"},
		out(c, "", "FAIL\texample/c [build failed]\n"),
		event{Action: "fail", Package: c},
	) + "go: some text that is not JSON\n"

	var printed, summary strings.Builder
	r := NewReport(&printed, false)
	if err := r.Read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.Summary(&summary)
	got := printed.String()
	for _, want := range []string{
		"ok  \texample/a\t0.01s\n",
		"    b_test.go:7: got 1, want 2\n    --- FAIL: TestBroken/sub (0.00s)\n--- FAIL: TestBroken (0.00s)\n",
		"FAIL\texample/b\t0.02s\n",
		"c/x_test.go:3:1: syntax error\n",
		"FAIL\texample/c [build failed]\n",
		"go: some text that is not JSON\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("printed output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"chatter of a passing test", "=== RUN", "PASS\n", "needs root"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("printed output has %q (plain go test would not print it):\n%s", unwanted, got)
		}
	}
	wantSummary := "\nSKIP summary: 2 tests skipped, they did not run:\n" +
		"  SKIP example/a: needs root\n       TestRoot, TestRoot2\n" +
		"FAIL summary: 2 failed:\n" +
		"  FAIL example/b: TestBroken/sub\n" +
		"       b_test.go:7: got 1, want 2\n" +
		"  FAIL example/c: (package failed outside any test)\n"
	if summary.String() != wantSummary {
		t.Errorf("summary:\n%s\nwant:\n%s", summary.String(), wantSummary)
	}
	if !r.Failed() {
		t.Error("Failed() = false after failed tests and a failed build")
	}
}

func TestReportAllPass(t *testing.T) {
	in := stream(t,
		event{Action: "run", Package: "p", Test: "TestA"},
		event{Action: "pass", Package: "p", Test: "TestA"},
		out("p", "", "ok  \tp\t0.01s\n"),
		event{Action: "pass", Package: "p"},
	)
	var printed, summary strings.Builder
	r := NewReport(&printed, false)
	if err := r.Read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.Summary(&summary)
	if r.Failed() || printed.String() != "ok  \tp\t0.01s\n" || summary.String() != "\nSKIP summary: no test skipped\n" {
		t.Errorf("failed %v, printed %q, summary %q", r.Failed(), printed.String(), summary.String())
	}
}

func TestSkipReason(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"=== RUN   TestX\n", "    x_test.go:10: needs containerd at /run/containerd/containerd.sock\n", "--- SKIP: TestX (0.00s)\n"},
			"needs containerd at /run/containerd/containerd.sock"},
		{[]string{"    x_test.go:1: two\n", "    x_test.go:2: lines\n"}, "two lines"},
		{[]string{"--- SKIP: TestX (0.00s)\n"}, "(no reason given)"},
	} {
		if got := skipReason(tc.lines); got != tc.want {
			t.Errorf("skipReason(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

func TestFailureMessages(t *testing.T) {
	lines := []string{
		"=== RUN   TestX\n",
		"    x_test.go:10: GET /a:\n",
		"        kube-apiserver: 1\n",
		"        minik8s:        2\n",
		"    a stray line\n",
		"        not a continuation after a stray line\n",
	}
	for i := range 9 {
		lines = append(lines, fmt.Sprintf("    x_test.go:%d: %s\n", 20+i, strings.Repeat("y", 500)))
	}
	got := failureMessages(lines)
	want := []string{"x_test.go:10: GET /a:", "  kube-apiserver: 1", "  minik8s:        2"}
	for i := range 7 {
		want = append(want, fmt.Sprintf("x_test.go:%d: %s...", 20+i, strings.Repeat("y", maxMessageLen-len("x_test.go:20: "))))
	}
	want = append(want, "...")
	if !slices.Equal(got, want) {
		t.Errorf("failureMessages:\n%q\nwant\n%q", got, want)
	}
}
