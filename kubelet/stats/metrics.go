package stats

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteResourceMetrics writes /metrics/resource: the Prometheus text
// format (0.0.4) of Kubernetes' resource metrics collector — metric
// families in name order, samples with millisecond timestamps of their
// reading, resource_scrape_error 1 when the summary failed.
func (p *Provider) WriteResourceMetrics(ctx context.Context, w io.Writer) error {
	s, err := p.Summary(ctx)
	if err != nil {
		p.cfg.Logger.Error("getting summary for the resource metrics endpoint", "err", err)
	}
	return writeResourceMetrics(w, s)
}

type sample struct {
	labels string
	value  float64
	at     time.Time // zero: no timestamp
}

type family struct {
	name, help, typ string
	samples         []sample
}

func writeResourceMetrics(w io.Writer, s *Summary) error {
	fams := map[string]*family{}
	add := func(name, help, typ string, smp sample) {
		f, ok := fams[name]
		if !ok {
			f = &family{name: name, help: help, typ: typ}
			fams[name] = f
		}
		f.samples = append(f.samples, smp)
	}
	const (
		containerCPU   = "container_cpu_usage_seconds_total"
		containerMem   = "container_memory_working_set_bytes"
		containerStart = "container_start_time_seconds"
		nodeCPU        = "node_cpu_usage_seconds_total"
		nodeMem        = "node_memory_working_set_bytes"
		podCPU         = "pod_cpu_usage_seconds_total"
		podMem         = "pod_memory_working_set_bytes"
	)
	scrapeErr := 0.0
	if s == nil {
		scrapeErr = 1
	} else {
		if c := s.Node.CPU; c != nil && c.UsageCoreNanoSeconds != nil {
			add(nodeCPU, "Cumulative cpu time consumed by the node in core-seconds", "counter",
				sample{value: seconds(*c.UsageCoreNanoSeconds), at: c.Time})
		}
		if m := s.Node.Memory; m != nil && m.WorkingSetBytes != nil {
			add(nodeMem, "Current working set of the node in bytes", "gauge", sample{value: float64(*m.WorkingSetBytes), at: m.Time})
		}
		for _, ps := range s.Pods {
			podLabels := fmt.Sprintf(`namespace=%s,pod=%s`, quote(ps.PodRef.Namespace), quote(ps.PodRef.Name))
			for _, c := range ps.Containers {
				l := fmt.Sprintf(`container=%s,%s`, quote(c.Name), podLabels)
				if c.StartTime.Unix() > 0 {
					add(containerStart, "Start time of the container since unix epoch in seconds", "gauge",
						sample{labels: l, value: float64(c.StartTime.UnixNano()) / 1e9})
				}
				if c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil {
					add(containerCPU, "Cumulative cpu time consumed by the container in core-seconds", "counter",
						sample{labels: l, value: seconds(*c.CPU.UsageCoreNanoSeconds), at: c.CPU.Time})
				}
				if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
					add(containerMem, "Current working set of the container in bytes", "gauge",
						sample{labels: l, value: float64(*c.Memory.WorkingSetBytes), at: c.Memory.Time})
				}
			}
			if c := ps.CPU; c != nil && c.UsageCoreNanoSeconds != nil {
				add(podCPU, "Cumulative cpu time consumed by the pod in core-seconds", "counter",
					sample{labels: podLabels, value: seconds(*c.UsageCoreNanoSeconds), at: c.Time})
			}
			if m := ps.Memory; m != nil && m.WorkingSetBytes != nil {
				add(podMem, "Current working set of the pod in bytes", "gauge",
					sample{labels: podLabels, value: float64(*m.WorkingSetBytes), at: m.Time})
			}
		}
	}
	add("resource_scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", "gauge", sample{value: scrapeErr})

	bw := bufio.NewWriter(w)
	for _, name := range []string{containerCPU, containerMem, containerStart, nodeCPU, nodeMem, podCPU, podMem, "resource_scrape_error"} {
		f, ok := fams[name]
		if !ok {
			// Kubernetes' collector describes every family even when it has
			// no sample; Prometheus' text encoder prints nothing for it.
			continue
		}
		fmt.Fprintf(bw, "# HELP %s [STABLE] %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, smp := range f.samples {
			bw.WriteString(f.name)
			if smp.labels != "" {
				bw.WriteString("{" + smp.labels + "}")
			}
			bw.WriteString(" " + strconv.FormatFloat(smp.value, 'g', -1, 64))
			if !smp.at.IsZero() {
				bw.WriteString(" " + strconv.FormatInt(smp.at.UnixMilli(), 10))
			}
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}

func seconds(nanos uint64) float64 { return float64(nanos) / float64(time.Second) }

// quote is a Prometheus label value: quoted, with \, " and newline escaped.
func quote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
