package metricsserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
)

// sample is one cumulative CPU counter and working set reading.
type sample struct {
	cpuSeconds float64
	cpuAt      time.Time
	memory     float64
	memAt      time.Time
	started    float64 // container start time, seconds since the epoch
	haveCPU    bool
	haveMem    bool
}

// containerKey names a container of a pod.
type containerKey struct{ namespace, pod, container string }

// nodeScrape is one scrape of one kubelet.
type nodeScrape struct {
	node       sample
	containers map[containerKey]*sample
}

// kubeletURL is the /metrics/resource URL of a node's kubelet: its
// InternalIP (else Hostname or ExternalIP) and its advertised port.
func kubeletURL(n *api.Node) (string, error) {
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		return "", fmt.Errorf("node %s has no kubelet port", n.Name)
	}
	for _, t := range []api.NodeAddressType{api.NodeInternalIP, api.NodeHostName, api.NodeExternalIP} {
		for _, a := range n.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return "https://" + net.JoinHostPort(a.Address, strconv.Itoa(int(port))) + "/metrics/resource", nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no address", n.Name)
}

// scrape reads one kubelet's resource metrics.
func scrape(ctx context.Context, hc *http.Client, url string) (*nodeScrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return parseResourceMetrics(resp.Body)
}

// parseResourceMetrics reads the Prometheus text of /metrics/resource.
func parseResourceMetrics(r io.Reader) (*nodeScrape, error) {
	ns := &nodeScrape{containers: map[containerKey]*sample{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, value, at, err := parseLine(line)
		if err != nil {
			return nil, err
		}
		var key containerKey
		if strings.HasPrefix(name, "container_") {
			key = containerKey{labels["namespace"], labels["pod"], labels["container"]}
		}
		c := func() *sample {
			s, ok := ns.containers[key]
			if !ok {
				s = &sample{}
				ns.containers[key] = s
			}
			return s
		}
		switch name {
		case "node_cpu_usage_seconds_total":
			ns.node.cpuSeconds, ns.node.cpuAt, ns.node.haveCPU = value, at, true
		case "node_memory_working_set_bytes":
			ns.node.memory, ns.node.memAt, ns.node.haveMem = value, at, true
		case "container_cpu_usage_seconds_total":
			s := c()
			s.cpuSeconds, s.cpuAt, s.haveCPU = value, at, true
		case "container_memory_working_set_bytes":
			s := c()
			s.memory, s.memAt, s.haveMem = value, at, true
		case "container_start_time_seconds":
			c().started = value
		}
	}
	return ns, sc.Err()
}

// parseLine splits `name{l="v",...} value [timestamp_ms]`.
func parseLine(line string) (name string, labels map[string]string, value float64, at time.Time, err error) {
	rest := line
	labels = map[string]string{}
	if i := strings.IndexAny(rest, "{ "); i >= 0 && rest[i] == '{' {
		name = rest[:i]
		rest = rest[i+1:]
		for {
			rest = strings.TrimLeft(rest, ", ")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			if eq < 0 || len(rest) < eq+2 || rest[eq+1] != '"' {
				return "", nil, 0, at, fmt.Errorf("malformed metric line %q", line)
			}
			k := rest[:eq]
			rest = rest[eq+2:]
			var b strings.Builder
			i := 0
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					switch rest[i] {
					case 'n':
						b.WriteByte('\n')
					default:
						b.WriteByte(rest[i])
					}
					continue
				}
				b.WriteByte(rest[i])
			}
			if i >= len(rest) {
				return "", nil, 0, at, fmt.Errorf("malformed metric line %q", line)
			}
			labels[k] = b.String()
			rest = rest[i+1:]
		}
	} else {
		name, rest, _ = strings.Cut(rest, " ")
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", nil, 0, at, fmt.Errorf("metric line %q has no value", line)
	}
	if value, err = strconv.ParseFloat(f[0], 64); err != nil {
		return "", nil, 0, at, fmt.Errorf("metric line %q: %w", line, err)
	}
	if len(f) > 1 {
		ms, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return "", nil, 0, at, fmt.Errorf("metric line %q: %w", line, err)
		}
		at = time.UnixMilli(ms)
	}
	return name, labels, value, at, nil
}
