package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Run is one `go test -bench` run's output, parsed.
type Run struct {
	Benches []*Bench
	// Failed are the packages (or build failures and panics) go test
	// reported as failing.
	Failed []string
}

// Bench is one top-level benchmark and its rows.
type Bench struct {
	Pkg  string // import path, when the output said
	Name string // "BenchmarkPodCreate"
	Rows []*Row
}

// Row is one sub-benchmark (Name below the benchmark's, "" for a benchmark
// without sub-benchmarks): its metrics in output order, and whether it
// failed or was skipped, with the last (FAIL) or first (SKIP) message.
type Row struct {
	Name    string
	Metrics []Metric
	Status  string // "", "FAIL" or "SKIP"
	Reason  string
}

// Metric is one value a benchmark reported ("1301 pods/s").
type Metric struct {
	Unit  string
	Value float64
}

var (
	resultLine = regexp.MustCompile(`^(Benchmark\S*)\s+(\d+)\s+(.*)$`)
	procSuffix = regexp.MustCompile(`-\d+$`)
	statusLine = regexp.MustCompile(`^\s*--- (FAIL|SKIP|BENCH): (Benchmark\S*)`)
	logLine    = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)
	okLine     = regexp.MustCompile(`^ok\s+(\S+)`)
	failLine   = regexp.MustCompile(`^FAIL\s+(\S+)`)
)

// Parse reads go test output, with or without -v: a row's messages follow
// its --- FAIL or --- SKIP line without -v and precede it with -v.
func Parse(r io.Reader) (*Run, error) {
	run := &Run{}
	byName := map[string]*Bench{}
	// segment counts the packages seen end (ok or FAIL lines): a package's
	// output may name its benchmarks before its pkg: line.
	segment := 0
	var pkg string
	// open is the row the last --- FAIL or --- SKIP line named; logs are
	// the messages since the last line that was not one.
	var open *Row
	var logs []string
	row := func(full string) *Row {
		name, sub, _ := strings.Cut(full, "/")
		key := strconv.Itoa(segment) + " " + name
		b := byName[key]
		if b == nil {
			b = &Bench{Pkg: pkg, Name: name}
			byName[key] = b
			run.Benches = append(run.Benches, b)
		}
		for _, r := range b.Rows {
			if r.Name == sub {
				return r
			}
		}
		r := &Row{Name: sub}
		b.Rows = append(b.Rows, r)
		return r
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := logLine.FindStringSubmatch(line); m != nil {
			logs = append(logs, m[1])
			if open != nil && (open.Status == "FAIL" || open.Reason == "") {
				open.Reason = m[1]
			}
			continue
		}
		open = nil
		prev := logs
		logs = nil
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimSpace(strings.TrimPrefix(line, "pkg: "))
			for _, b := range run.Benches {
				if b.Pkg == "" {
					b.Pkg = pkg
				}
			}
		case resultLine.MatchString(line):
			m := resultLine.FindStringSubmatch(line)
			r := row(procSuffix.ReplaceAllString(m[1], ""))
			f := strings.Fields(m[3])
			for i := 0; i+1 < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return nil, fmt.Errorf("%q: value %q: %w", line, f[i], err)
				}
				r.Metrics = append(r.Metrics, Metric{Unit: f[i+1], Value: v})
			}
		case statusLine.MatchString(line):
			m := statusLine.FindStringSubmatch(line)
			if m[1] == "BENCH" {
				continue // the logs of a row that ran
			}
			open = row(m[2])
			open.Status = m[1]
			if len(prev) > 0 { // -v: the messages came first
				open.Reason = prev[len(prev)-1]
				if m[1] == "SKIP" {
					open.Reason = prev[0]
				}
			}
		case okLine.MatchString(line):
			assignPkg(run, okLine.FindStringSubmatch(line)[1])
			pkg = ""
			segment++
		case failLine.MatchString(line):
			p := failLine.FindStringSubmatch(line)[1]
			assignPkg(run, p)
			run.Failed = append(run.Failed, p)
			pkg = ""
			segment++
		case strings.HasPrefix(line, "panic: "):
			run.Failed = append(run.Failed, line)
		}
	}
	return run, sc.Err()
}

// assignPkg gives benchmarks parsed without a pkg: line (a package whose
// only benchmark was skipped prints none) the package go test named last.
func assignPkg(run *Run, pkg string) {
	for _, b := range run.Benches {
		if b.Pkg == "" {
			b.Pkg = pkg
		}
	}
}

// OK says whether nothing failed.
func (run *Run) OK() bool {
	if len(run.Failed) > 0 {
		return false
	}
	for _, b := range run.Benches {
		for _, r := range b.rows() {
			if r.Status == "FAIL" {
				return false
			}
		}
	}
	return true
}

// rows are the rows to show: a parent that failed only because a
// sub-benchmark did is left out (its sub-benchmark says why).
func (b *Bench) rows() []*Row {
	var out []*Row
	for _, r := range b.Rows {
		parent := false
		for _, o := range b.Rows {
			if o != r && (r.Name == "" || strings.HasPrefix(o.Name, r.Name+"/")) {
				parent = true
				break
			}
		}
		if parent && len(r.Metrics) == 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}

// baseline is the row r is compared with, nil for a row that is a
// baseline itself. Rows whose last name element other rows share
// ("clients=64") are compared with the first of them; any other row with
// the benchmark's first row.
func baseline(rows []*Row, r *Row) *Row {
	last := lastElem(r.Name)
	var first *Row
	shared := false
	for _, o := range rows {
		if lastElem(o.Name) == last && strings.Contains(o.Name, "/") {
			if first == nil {
				first = o
			}
			shared = shared || o != r
		}
	}
	if shared {
		if first == r {
			return nil
		}
		return first
	}
	if rows[0] == r {
		return nil
	}
	return rows[0]
}

func lastElem(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

// units are the metric columns of rows in first-seen order; ns/op only
// when nothing else was reported (the long benchmarks report their own
// figures, their ns/op is the wall time of setup and all).
func units(rows []*Row) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, m := range r.Metrics {
			if !seen[m.Unit] {
				seen[m.Unit] = true
				out = append(out, m.Unit)
			}
		}
	}
	if len(out) > 1 {
		for i, u := range out {
			if u == "ns/op" {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
	}
	return out
}

func (r *Row) value(unit string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Unit == unit {
			return m.Value, true
		}
	}
	return 0, false
}

// Print writes the summary.
func (run *Run) Print(w io.Writer) {
	fmt.Fprintln(w, "== benchmark summary: one run on this machine; compare rows by their ratios ==")
	fmt.Fprintln(w, "   (1.50x: the figure divided by the same figure of the row named under vs)")
	for _, b := range run.Benches {
		rows := b.rows()
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s  %s\n", b.Name, b.Pkg)
		us := units(rows)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		header := "  row\tvs"
		for _, u := range us {
			header += "\t" + u
		}
		fmt.Fprintln(tw, header+"\t")
		var notes []string
		for _, r := range rows {
			name := r.Name
			if name == "" {
				name = "-"
			}
			base := baseline(rows, r)
			line := "  " + name + "\t"
			if base != nil {
				line += base.Name
			}
			if r.Status != "" {
				notes = append(notes, fmt.Sprintf("  %s %s: %s", r.Status, name, r.Reason))
			}
			if r.Status != "" && len(r.Metrics) == 0 {
				// Every column, so the rows below stay aligned.
				fmt.Fprintln(tw, line+"\t"+r.Status+strings.Repeat("\t", len(us)))
				continue
			}
			for _, u := range us {
				v, ok := r.value(u)
				cell := ""
				if ok {
					cell = formatFloat(v)
					if base != nil {
						if bv, bok := base.value(u); bok && bv != 0 && v != 0 {
							cell += fmt.Sprintf(" (%sx)", formatFloat(v/bv))
						}
					}
				}
				line += "\t" + cell
			}
			if r.Status != "" {
				line += "\t" + r.Status
			}
			fmt.Fprintln(tw, line+"\t")
		}
		tw.Flush()
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	if len(run.Failed) > 0 {
		fmt.Fprintf(w, "\nFAILED: %s\n", strings.Join(run.Failed, ", "))
	}
}

// formatFloat prints v with about three significant digits.
func formatFloat(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
