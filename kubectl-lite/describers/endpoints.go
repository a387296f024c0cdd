package describers

import (
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
)

// describeEndpoints is kubectl's EndpointsDescriber: each subset's ready
// and not-ready addresses and its ports.
func describeEndpoints(w *prefixWriter, ep *api.Endpoints, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", ep.Name)
	w.write(level0, "Namespace:\t%s\n", ep.Namespace)
	w.labels("Labels", ep.Labels)
	w.annotations("Annotations", ep.Annotations)
	w.write(level0, "Subsets:\n")
	ips := func(as []api.EndpointAddress) string {
		if len(as) == 0 {
			return "<none>"
		}
		out := make([]string, len(as))
		for i, a := range as {
			out[i] = a.IP
		}
		return strings.Join(out, ",")
	}
	for _, ss := range ep.Subsets {
		w.write(level1, "Addresses:\t%s\n", ips(ss.Addresses))
		w.write(level1, "NotReadyAddresses:\t%s\n", ips(ss.NotReadyAddresses))
		if len(ss.Ports) > 0 {
			w.write(level1, "Ports:\n")
			w.write(level2, "Name\tPort\tProtocol\n")
			w.write(level2, "----\t----\t--------\n")
			for _, p := range ss.Ports {
				name := p.Name
				if name == "" {
					name = "<unset>"
				}
				w.write(level2, "%s\t%d\t%s\n", name, p.Port, p.Protocol)
			}
		}
		w.write(level0, "\n")
	}
	w.events(evs, now)
}

// describeEndpointSlice is kubectl's EndpointSliceDescriber.
func describeEndpointSlice(w *prefixWriter, eps *api.EndpointSlice, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", eps.Name)
	w.write(level0, "Namespace:\t%s\n", eps.Namespace)
	w.labels("Labels", eps.Labels)
	w.annotations("Annotations", eps.Annotations)
	w.write(level0, "AddressType:\t%s\n", eps.AddressType)
	orUnset := func(s *string) string {
		if s == nil {
			return "<unset>"
		}
		return *s
	}
	if len(eps.Ports) == 0 {
		w.write(level0, "Ports: <unset>\n")
	} else {
		w.write(level0, "Ports:\n")
		w.write(level1, "Name\tPort\tProtocol\n")
		w.write(level1, "----\t----\t--------\n")
		for _, p := range eps.Ports {
			name := "<unset>"
			if p.Name != nil && *p.Name != "" {
				name = *p.Name
			}
			port := "<unset>"
			if p.Port != nil {
				port = strconv.Itoa(int(*p.Port))
			}
			proto := ""
			if p.Protocol != nil {
				proto = string(*p.Protocol)
			}
			w.write(level1, "%s\t%s\t%s\n", name, port, proto)
		}
	}
	if len(eps.Endpoints) == 0 {
		w.write(level0, "Endpoints: <none>\n")
	} else {
		w.write(level0, "Endpoints:\n")
		for _, e := range eps.Endpoints {
			addrs := strings.Join(e.Addresses, ", ")
			if addrs == "" {
				addrs = "<none>"
			}
			w.write(level1, "- Addresses:\t%s\n", addrs)
			w.write(level2, "Conditions:\n")
			ready := "<unset>"
			if e.Conditions.Ready != nil {
				ready = strconv.FormatBool(*e.Conditions.Ready)
			}
			w.write(level3, "Ready:\t%s\n", ready)
			w.write(level2, "Hostname:\t%s\n", orUnset(e.Hostname))
			if e.TargetRef != nil {
				w.write(level2, "TargetRef:\t%s/%s\n", e.TargetRef.Kind, e.TargetRef.Name)
			}
			w.write(level2, "NodeName:\t%s\n", orUnset(e.NodeName))
			w.write(level2, "Zone:\t%s\n", orUnset(e.Zone))
		}
	}
	w.events(evs, now)
}
