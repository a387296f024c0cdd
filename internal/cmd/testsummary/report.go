package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), with the build
// events of Go 1.24 (ImportPath, build-output, build-fail).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// Report follows a `go test -json` stream: it prints what plain go test
// would as packages finish, and keeps the skips and failures for Summary.
type Report struct {
	out     io.Writer
	verbose bool
	pkgs    map[string]*pkgState
	skips   []result
	fails   []result
	failed  bool
}

type pkgState struct {
	lines []string            // package-level output
	tests map[string][]string // output per test
}

// result is a skipped or failed test and why.
type result struct {
	pkg, test, reason string
	// messages are a failed test's own lines (t.Error, t.Fatal: those
	// starting "file_test.go:N: "), for the summary: a CI log cut to its
	// tail still says why.
	messages []string
}

// maxMessages and maxMessageLen bound what the summary repeats of a
// failure.
const (
	maxMessages   = 8
	maxMessageLen = 400
	// maxContinuation lines of a multi-line message are kept.
	maxContinuation = 4
)

// failureMessages picks a failed test's own messages out of its output.
func failureMessages(lines []string) []string {
	var out []string
	messages, continued := 0, -1 // continued: lines kept of the last message's continuation
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if !logPrefix.MatchString(t) {
			// A multi-line message goes on in lines indented under it.
			if continued >= 0 && continued < maxContinuation && t != "" && strings.HasPrefix(l, "        ") {
				out = append(out, "  "+truncate(t))
				continued++
			} else {
				continued = -1
			}
			continue
		}
		if messages == maxMessages {
			out = append(out, "...")
			break
		}
		out = append(out, truncate(t))
		messages, continued = messages+1, 0
	}
	return out
}

func truncate(s string) string {
	if len(s) > maxMessageLen {
		return s[:maxMessageLen] + "..."
	}
	return s
}

// NewReport prints to out; verbose (go test -v) prints every line as it comes.
func NewReport(out io.Writer, verbose bool) *Report {
	return &Report{out: out, verbose: verbose, pkgs: map[string]*pkgState{}}
}

// Read consumes the stream until EOF. A line that is not JSON (go test
// writes some errors as text) is printed as it is.
func (r *Report) Read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Action == "" {
			fmt.Fprintln(r.out, sc.Text())
			continue
		}
		r.handle(ev)
	}
	return sc.Err()
}

func (r *Report) pkg(name string) *pkgState {
	p := r.pkgs[name]
	if p == nil {
		p = &pkgState{tests: map[string][]string{}}
		r.pkgs[name] = p
	}
	return p
}

func (r *Report) handle(ev event) {
	switch ev.Action {
	case "build-output":
		fmt.Fprint(r.out, ev.Output)
		return
	case "build-fail":
		r.failed = true
		return
	}
	p := r.pkg(ev.Package)
	if ev.Action == "output" {
		if r.verbose {
			fmt.Fprint(r.out, ev.Output)
		}
		if ev.Test == "" {
			p.lines = append(p.lines, ev.Output)
		} else {
			p.tests[ev.Test] = append(p.tests[ev.Test], ev.Output)
		}
		return
	}
	if ev.Test != "" {
		switch ev.Action {
		case "skip":
			r.skips = append(r.skips, result{pkg: ev.Package, test: ev.Test, reason: skipReason(p.tests[ev.Test])})
		case "fail":
			r.failed = true
			r.fails = append(r.fails, result{pkg: ev.Package, test: ev.Test, messages: failureMessages(p.tests[ev.Test])})
			if !r.verbose {
				r.printLines(p.tests[ev.Test])
			}
		}
		if ev.Action == "pass" || ev.Action == "skip" || ev.Action == "fail" {
			delete(p.tests, ev.Test)
		}
		return
	}
	switch ev.Action {
	case "pass", "skip":
		// Plain go test prints only the "ok" (or "?  no test files") line.
		if !r.verbose {
			for _, l := range p.lines {
				if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?") {
					fmt.Fprint(r.out, l)
				}
			}
		}
		delete(r.pkgs, ev.Package)
	case "fail":
		r.failed = true
		if !r.verbose {
			// What no test owns: a panic outside a test, TestMain's
			// output, the FAIL line. Tests still running (a timeout
			// panic) are printed too.
			for test, lines := range p.tests {
				r.fails = append(r.fails, result{pkg: ev.Package, test: test, reason: "did not finish"})
				r.printLines(lines)
			}
			r.printLines(p.lines)
		}
		if len(p.tests) == 0 && !hasFailedTest(r.fails, ev.Package) {
			r.fails = append(r.fails, result{pkg: ev.Package, reason: "package failed outside any test"})
		}
		delete(r.pkgs, ev.Package)
	}
}

func hasFailedTest(fails []result, pkg string) bool {
	for _, f := range fails {
		if f.pkg == pkg {
			return true
		}
	}
	return false
}

// printLines prints test output without test2json's framing lines.
func (r *Report) printLines(lines []string) {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "=== ") {
			continue
		}
		fmt.Fprint(r.out, l)
	}
}

// logPrefix is what t.Log puts before a message: "file_test.go:12: ".
var logPrefix = regexp.MustCompile(`^\S+\.go:\d+: `)

// skipReason is the message of a skipped test: its log lines without the
// file:line prefixes and the framing lines.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, logPrefix.ReplaceAllString(t, ""))
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// Failed says whether a test, a package or a build failed.
func (r *Report) Failed() bool { return r.failed }

// Summary prints the skipped tests grouped by package and reason, then the
// failed ones.
func (r *Report) Summary(out io.Writer) {
	fmt.Fprintln(out)
	if len(r.skips) == 0 {
		fmt.Fprintln(out, "SKIP summary: no test skipped")
	} else {
		type key struct{ pkg, reason string }
		groups := map[key][]string{}
		for _, s := range r.skips {
			k := key{s.pkg, s.reason}
			groups[k] = append(groups[k], s.test)
		}
		keys := make([]key, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].pkg != keys[j].pkg {
				return keys[i].pkg < keys[j].pkg
			}
			return keys[i].reason < keys[j].reason
		})
		fmt.Fprintf(out, "SKIP summary: %d tests skipped, they did not run:\n", len(r.skips))
		for _, k := range keys {
			fmt.Fprintf(out, "  SKIP %s: %s\n       %s\n", k.pkg, k.reason, strings.Join(groups[k], ", "))
		}
	}
	// A parent test fails with its subtest: list the subtest only.
	var fails []result
	for _, f := range r.fails {
		if !slices.ContainsFunc(r.fails, func(g result) bool {
			return g.pkg == f.pkg && f.test != "" && strings.HasPrefix(g.test, f.test+"/")
		}) {
			fails = append(fails, f)
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(out, "FAIL summary: %d failed:\n", len(fails))
		for _, f := range fails {
			what := f.test
			if f.reason != "" {
				what = strings.TrimSpace(what + " (" + f.reason + ")")
			}
			fmt.Fprintf(out, "  FAIL %s: %s\n", f.pkg, what)
			for _, m := range f.messages {
				fmt.Fprintf(out, "       %s\n", m)
			}
		}
	}
}
