package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Obj is an object as decoded JSON.
type Obj = map[string]any

// Options shape a table.
type Options struct {
	Wide          bool
	WithNamespace bool // -A: a NAMESPACE column first
	WithKind      bool // several types: names as kind.group/name
	Kind          string
	Group         string
	NoHeaders     bool // watch rows after the first table
	ShowLabels    bool // --show-labels: a LABELS column last
	// LabelColumns are -L keys: one column each, before LABELS, headed by
	// the key's last path segment in upper case.
	LabelColumns []string
	// Event, when set, is printed in a first EVENT column
	// (get -w --output-watch-events).
	Event string
	Now   time.Time
}

// column is one table column; wide columns appear only with -o wide.
type column struct {
	name string
	wide bool
	cell func(o Obj, now time.Time) string
}

var nameCol = column{name: "NAME", cell: func(o Obj, _ time.Time) string { return str(o, "metadata", "name") }}
var ageCol = column{name: "AGE", cell: age}

// tables are kubectl's columns per kind.
var tables = map[string][]column{
	"Pod": {nameCol,
		{name: "READY", cell: podReady},
		{name: "STATUS", cell: podStatus},
		{name: "RESTARTS", cell: podRestarts},
		ageCol,
		{name: "IP", wide: true, cell: func(o Obj, _ time.Time) string { return OrNone(str(o, "status", "podIP")) }},
		{name: "NODE", wide: true, cell: func(o Obj, _ time.Time) string { return OrNone(str(o, "spec", "nodeName")) }},
		{name: "NOMINATED NODE", wide: true, cell: func(o Obj, _ time.Time) string { return OrNone(str(o, "status", "nominatedNodeName")) }},
		{name: "READINESS GATES", wide: true, cell: func(Obj, time.Time) string { return "<none>" }},
	},
	"Deployment": {nameCol,
		{name: "READY", cell: func(o Obj, _ time.Time) string {
			return fmt.Sprintf("%d/%d", num(o, "status", "readyReplicas"), num(o, "spec", "replicas"))
		}},
		{name: "UP-TO-DATE", cell: numCell("status", "updatedReplicas")},
		{name: "AVAILABLE", cell: numCell("status", "availableReplicas")},
		ageCol,
		{name: "CONTAINERS", wide: true, cell: containers("name")},
		{name: "IMAGES", wide: true, cell: containers("image")},
		{name: "SELECTOR", wide: true, cell: selector},
	},
	"ReplicaSet": {nameCol,
		{name: "DESIRED", cell: numCell("spec", "replicas")},
		{name: "CURRENT", cell: numCell("status", "replicas")},
		{name: "READY", cell: numCell("status", "readyReplicas")},
		ageCol,
		{name: "CONTAINERS", wide: true, cell: containers("name")},
		{name: "IMAGES", wide: true, cell: containers("image")},
		{name: "SELECTOR", wide: true, cell: selector},
	},
	"Node": {nameCol,
		{name: "STATUS", cell: nodeStatus},
		{name: "ROLES", cell: nodeRoles},
		ageCol,
		{name: "VERSION", cell: func(o Obj, _ time.Time) string { return str(o, "status", "nodeInfo", "kubeletVersion") }},
		{name: "INTERNAL-IP", wide: true, cell: nodeAddress("InternalIP")},
		{name: "EXTERNAL-IP", wide: true, cell: nodeAddress("ExternalIP")},
		{name: "OS-IMAGE", wide: true, cell: nodeInfo("osImage")},
		{name: "KERNEL-VERSION", wide: true, cell: nodeInfo("kernelVersion")},
		{name: "CONTAINER-RUNTIME", wide: true, cell: nodeInfo("containerRuntimeVersion")},
	},
	"Endpoints": {nameCol,
		{name: "ENDPOINTS", cell: endpoints},
		ageCol,
	},
	"EndpointSlice": {nameCol,
		{name: "ADDRESSTYPE", cell: func(o Obj, _ time.Time) string { return str(o, "addressType") }},
		{name: "PORTS", cell: slicePorts},
		{name: "ENDPOINTS", cell: sliceEndpoints},
		ageCol,
	},
	"Job": {nameCol,
		{name: "STATUS", cell: jobStatus},
		{name: "COMPLETIONS", cell: jobCompletions},
		{name: "DURATION", cell: jobDuration},
		ageCol,
		{name: "CONTAINERS", wide: true, cell: containers("name")},
		{name: "IMAGES", wide: true, cell: containers("image")},
		{name: "SELECTOR", wide: true, cell: selector},
	},
	"Lease": {nameCol,
		{name: "HOLDER", cell: func(o Obj, _ time.Time) string { return str(o, "spec", "holderIdentity") }},
		ageCol,
	},
	"Role":        {nameCol, {name: "CREATED AT", cell: createdAt}},
	"ClusterRole": {nameCol, {name: "CREATED AT", cell: createdAt}},
	"RoleBinding": {nameCol,
		{name: "ROLE", cell: func(o Obj, _ time.Time) string { return str(o, "roleRef", "kind") + "/" + str(o, "roleRef", "name") }},
		ageCol,
		{name: "USERS", wide: true, cell: subjects("User")},
		{name: "GROUPS", wide: true, cell: subjects("Group")},
		{name: "SERVICEACCOUNTS", wide: true, cell: subjects("ServiceAccount")},
	},
	"ClusterRoleBinding": {nameCol,
		{name: "ROLE", cell: func(o Obj, _ time.Time) string { return str(o, "roleRef", "kind") + "/" + str(o, "roleRef", "name") }},
		ageCol,
		{name: "USERS", wide: true, cell: subjects("User")},
		{name: "GROUPS", wide: true, cell: subjects("Group")},
		{name: "SERVICEACCOUNTS", wide: true, cell: subjects("ServiceAccount")},
	},
	"CertificateSigningRequest": {nameCol,
		ageCol,
		{name: "SIGNERNAME", cell: func(o Obj, _ time.Time) string { return str(o, "spec", "signerName") }},
		{name: "REQUESTOR", cell: func(o Obj, _ time.Time) string { return str(o, "spec", "username") }},
		{name: "REQUESTEDDURATION", cell: func(o Obj, _ time.Time) string {
			if at(o, "spec", "expirationSeconds") == nil {
				return "<none>"
			}
			return HumanDuration(time.Duration(num(o, "spec", "expirationSeconds")) * time.Second)
		}},
		{name: "CONDITION", cell: csrCondition},
	},
	"Namespace": {nameCol,
		{name: "STATUS", cell: func(o Obj, _ time.Time) string { return str(o, "status", "phase") }},
		ageCol,
	},
	"Service": {nameCol,
		{name: "TYPE", cell: func(o Obj, _ time.Time) string { return str(o, "spec", "type") }},
		{name: "CLUSTER-IP", cell: func(o Obj, _ time.Time) string { return OrNone(str(o, "spec", "clusterIP")) }},
		{name: "EXTERNAL-IP", cell: serviceExternalIP},
		{name: "PORT(S)", cell: servicePorts},
		ageCol,
		{name: "SELECTOR", wide: true, cell: func(o Obj, _ time.Time) string { return OrNone(JoinLabels(mapAt(o, "spec", "selector"))) }},
	},
	"ConfigMap": {nameCol,
		{name: "DATA", cell: func(o Obj, _ time.Time) string {
			return strconv.Itoa(len(mapAt(o, "data")) + len(mapAt(o, "binaryData")))
		}},
		ageCol,
	},
	"Secret": {nameCol,
		{name: "TYPE", cell: func(o Obj, _ time.Time) string { return str(o, "type") }},
		{name: "DATA", cell: func(o Obj, _ time.Time) string { return strconv.Itoa(len(mapAt(o, "data"))) }},
		ageCol,
	},
	"Event": {
		{name: "LAST SEEN", cell: eventLastSeen},
		{name: "TYPE", cell: func(o Obj, _ time.Time) string { return str(o, "type") }},
		{name: "REASON", cell: func(o Obj, _ time.Time) string { return str(o, "reason") }},
		{name: "OBJECT", cell: func(o Obj, _ time.Time) string {
			return strings.ToLower(str(o, "involvedObject", "kind")) + "/" + str(o, "involvedObject", "name")
		}},
		{name: "MESSAGE", cell: func(o Obj, _ time.Time) string { return strings.TrimSpace(str(o, "message")) }},
	},
}

// EventsTable is the table of "kubectl events": the columns of events,
// with the object's kind as the API writes it ("Deployment/web").
const EventsTable = "kubectl-events"

func init() {
	cols := append([]column(nil), tables["Event"]...)
	for i, c := range cols {
		if c.name == "OBJECT" {
			cols[i].cell = func(o Obj, _ time.Time) string {
				return str(o, "involvedObject", "kind") + "/" + str(o, "involvedObject", "name")
			}
		}
	}
	tables[EventsTable] = cols
}

var genericTable = []column{nameCol, ageCol}

// PrintTable writes items as kubectl's table for opts.Kind. It writes
// nothing for no items; the caller prints "No resources found".
func PrintTable(out io.Writer, items []Obj, opts Options) error {
	cols, ok := tables[opts.Kind]
	if !ok {
		cols = genericTable
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	w := tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
	var head []string
	if opts.Event != "" {
		head = append(head, "EVENT")
	}
	if opts.WithNamespace {
		head = append(head, "NAMESPACE")
	}
	for _, c := range cols {
		if !c.wide || opts.Wide {
			head = append(head, c.name)
		}
	}
	for _, k := range opts.LabelColumns {
		parts := strings.Split(k, "/")
		head = append(head, strings.ToUpper(parts[len(parts)-1]))
	}
	if opts.ShowLabels {
		head = append(head, "LABELS")
	}
	if !opts.NoHeaders {
		fmt.Fprintln(w, strings.Join(head, "\t"))
	}
	for _, o := range items {
		var row []string
		if opts.Event != "" {
			row = append(row, opts.Event)
		}
		if opts.WithNamespace {
			row = append(row, str(o, "metadata", "namespace"))
		}
		for _, c := range cols {
			if c.wide && !opts.Wide {
				continue
			}
			v := c.cell(o, opts.Now)
			if c.name == "NAME" && opts.WithKind {
				v = ResourceName(opts.Kind, opts.Group) + "/" + v
			}
			row = append(row, v)
		}
		for _, k := range opts.LabelColumns {
			v, _ := mapAt(o, "metadata", "labels")[k].(string)
			row = append(row, v)
		}
		if opts.ShowLabels {
			row = append(row, LabelString(o))
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	return w.Flush()
}

// ResourceName is kubectl's "kind.group" prefix: "pod", "deployment.apps".
func ResourceName(kind, group string) string {
	k := strings.ToLower(kind)
	if group != "" {
		return k + "." + group
	}
	return k
}

func at(o Obj, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func str(o Obj, path ...string) string {
	s, _ := at(o, path...).(string)
	return s
}

func mapAt(o Obj, path ...string) map[string]any {
	m, _ := at(o, path...).(map[string]any)
	return m
}

func sliceAt(o Obj, path ...string) []any {
	s, _ := at(o, path...).([]any)
	return s
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return i
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

func num(o Obj, path ...string) int64 { return toInt(at(o, path...)) }

func numCell(path ...string) func(Obj, time.Time) string {
	return func(o Obj, _ time.Time) string { return strconv.FormatInt(num(o, path...), 10) }
}

// OrNone is s, or kubectl's "<none>" for an empty cell.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func age(o Obj, now time.Time) string {
	ts := str(o, "metadata", "creationTimestamp")
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "<unknown>"
	}
	return HumanDuration(now.Sub(t))
}

func podReady(o Obj, _ time.Time) string {
	total := len(sliceAt(o, "spec", "containers"))
	ready := 0
	for _, cs := range sliceAt(o, "status", "containerStatuses") {
		if m, ok := cs.(map[string]any); ok && m["ready"] == true {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, total)
}

func podRestarts(o Obj, _ time.Time) string {
	var n int64
	for _, cs := range sliceAt(o, "status", "containerStatuses") {
		if m, ok := cs.(map[string]any); ok {
			n += toInt(m["restartCount"])
		}
	}
	return strconv.FormatInt(n, 10)
}

// podStatus follows kubectl's printPod: the pod's reason, else its phase,
// overridden by a waiting or terminated container's reason, and
// "Terminating" once deletion started.
func podStatus(o Obj, _ time.Time) string {
	reason := str(o, "status", "phase")
	if r := str(o, "status", "reason"); r != "" {
		reason = r
	}
	for _, cs := range sliceAt(o, "status", "containerStatuses") {
		m, ok := cs.(map[string]any)
		if !ok {
			continue
		}
		if r := str(m, "state", "waiting", "reason"); r != "" {
			reason = r
		} else if r := str(m, "state", "terminated", "reason"); r != "" {
			reason = r
		}
	}
	if str(o, "metadata", "deletionTimestamp") != "" {
		if str(o, "status", "reason") == "NodeLost" {
			return "Unknown"
		}
		return "Terminating"
	}
	if reason == "" {
		return "Pending"
	}
	return reason
}

func containers(field string) func(Obj, time.Time) string {
	return func(o Obj, _ time.Time) string {
		var out []string
		for _, c := range sliceAt(o, "spec", "template", "spec", "containers") {
			if m, ok := c.(map[string]any); ok {
				out = append(out, str(m, field))
			}
		}
		return OrNone(strings.Join(out, ","))
	}
}

// JoinLabels is kubectl's "k1=v1,k2=v2" of labels or a selector's
// matchLabels, keys sorted.
func JoinLabels[V any](m map[string]V) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ",")
}

func selector(o Obj, _ time.Time) string {
	return OrNone(JoinLabels(mapAt(o, "spec", "selector", "matchLabels")))
}

func nodeStatus(o Obj, _ time.Time) string {
	status := "Unknown"
	for _, c := range sliceAt(o, "status", "conditions") {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		switch m["status"] {
		case "True":
			status = "Ready"
		case "False":
			status = "NotReady"
		}
	}
	if at(o, "spec", "unschedulable") == true {
		status += ",SchedulingDisabled"
	}
	return status
}

func nodeRoles(o Obj, _ time.Time) string {
	return NodeRoles(maps.Keys(mapAt(o, "metadata", "labels")))
}

// NodeRoles is kubectl's ROLES of a node with these label keys: the
// node-role.kubernetes.io/ROLE suffixes, sorted and comma-separated, or
// "<none>".
func NodeRoles(labelKeys iter.Seq[string]) string {
	var roles []string
	for k := range labelKeys {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	slices.Sort(roles)
	return OrNone(strings.Join(roles, ","))
}

func nodeAddress(typ string) func(Obj, time.Time) string {
	return func(o Obj, _ time.Time) string {
		for _, a := range sliceAt(o, "status", "addresses") {
			if m, ok := a.(map[string]any); ok && m["type"] == typ {
				return str(m, "address")
			}
		}
		return "<none>"
	}
}

func serviceExternalIP(o Obj, _ time.Time) string {
	var ips []string
	for _, ip := range sliceAt(o, "spec", "externalIPs") {
		if s, ok := ip.(string); ok {
			ips = append(ips, s)
		}
	}
	for _, in := range sliceAt(o, "status", "loadBalancer", "ingress") {
		if m, ok := in.(map[string]any); ok && str(m, "ip") != "" {
			ips = append(ips, str(m, "ip"))
		}
	}
	if len(ips) == 0 {
		if str(o, "spec", "type") == "LoadBalancer" {
			return "<pending>"
		}
		return "<none>"
	}
	return strings.Join(ips, ",")
}

func servicePorts(o Obj, _ time.Time) string {
	var out []string
	for _, p := range sliceAt(o, "spec", "ports") {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		proto := str(m, "protocol")
		if proto == "" {
			proto = "TCP"
		}
		s := strconv.FormatInt(toInt(m["port"]), 10)
		if np := toInt(m["nodePort"]); np != 0 {
			s += ":" + strconv.FormatInt(np, 10)
		}
		out = append(out, s+"/"+proto)
	}
	return OrNone(strings.Join(out, ","))
}

func eventLastSeen(o Obj, now time.Time) string {
	for _, p := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"metadata", "creationTimestamp"}} {
		if t, err := time.Parse(time.RFC3339, str(o, p...)); err == nil {
			return HumanDuration(now.Sub(t))
		}
	}
	return "<unknown>"
}

func nodeInfo(field string) func(Obj, time.Time) string {
	return func(o Obj, _ time.Time) string { return OrNone(str(o, "status", "nodeInfo", field)) }
}

// moreThan3 joins at most three items and says how many were left out,
// as kubectl's endpoints columns do.
func moreThan3(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	if len(items) > 3 {
		return strings.Join(items[:3], ",") + fmt.Sprintf(" + %d more...", len(items)-3)
	}
	return strings.Join(items, ",")
}

// endpoints is kubectl's ENDPOINTS of an Endpoints object: ip:port for
// every ready address and port, three at most.
func endpoints(o Obj, _ time.Time) string {
	var out []string
	for _, ss := range sliceAt(o, "subsets") {
		sm, _ := ss.(map[string]any)
		ports, addrs := sliceAt(sm, "ports"), sliceAt(sm, "addresses")
		if len(ports) == 0 {
			for _, a := range addrs {
				am, _ := a.(map[string]any)
				out = append(out, str(am, "ip"))
			}
			continue
		}
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			for _, a := range addrs {
				am, _ := a.(map[string]any)
				out = append(out, net.JoinHostPort(str(am, "ip"), strconv.FormatInt(toInt(pm["port"]), 10)))
			}
		}
	}
	return moreThan3(out)
}

func slicePorts(o Obj, _ time.Time) string {
	var out []string
	for _, p := range sliceAt(o, "ports") {
		pm, _ := p.(map[string]any)
		if pm["port"] == nil {
			out = append(out, "<unset>")
			continue
		}
		out = append(out, strconv.FormatInt(toInt(pm["port"]), 10))
	}
	return moreThan3(out)
}

func sliceEndpoints(o Obj, _ time.Time) string {
	var out []string
	for _, e := range sliceAt(o, "endpoints") {
		em, _ := e.(map[string]any)
		for _, a := range sliceAt(em, "addresses") {
			if s, ok := a.(string); ok {
				out = append(out, s)
			}
		}
	}
	return moreThan3(out)
}

func hasCondition(o Obj, typ string) bool {
	for _, c := range sliceAt(o, "status", "conditions") {
		if m, ok := c.(map[string]any); ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// jobStatus follows kubectl's printJob.
func jobStatus(o Obj, _ time.Time) string {
	switch {
	case hasCondition(o, "Complete"):
		return "Complete"
	case hasCondition(o, "Failed"):
		return "Failed"
	case str(o, "metadata", "deletionTimestamp") != "":
		return "Terminating"
	case hasCondition(o, "Suspended"):
		return "Suspended"
	case hasCondition(o, "FailureTarget"):
		return "FailureTarget"
	}
	return "Running"
}

func jobCompletions(o Obj, _ time.Time) string {
	succeeded := num(o, "status", "succeeded")
	switch {
	case at(o, "spec", "completions") != nil:
		return fmt.Sprintf("%d/%d", succeeded, num(o, "spec", "completions"))
	case at(o, "spec", "parallelism") != nil && num(o, "spec", "parallelism") > 1:
		return fmt.Sprintf("%d/1 of %d", succeeded, num(o, "spec", "parallelism"))
	}
	return fmt.Sprintf("%d/1", succeeded)
}

func jobDuration(o Obj, now time.Time) string {
	start, err := time.Parse(time.RFC3339, str(o, "status", "startTime"))
	if err != nil {
		return ""
	}
	end, err := time.Parse(time.RFC3339, str(o, "status", "completionTime"))
	if err != nil {
		end = now
	}
	return HumanDuration(end.Sub(start))
}

func createdAt(o Obj, _ time.Time) string {
	t, err := time.Parse(time.RFC3339, str(o, "metadata", "creationTimestamp"))
	if err != nil {
		return "<unknown>"
	}
	return t.UTC().Format(time.RFC3339)
}

func subjects(kind string) func(Obj, time.Time) string {
	return func(o Obj, _ time.Time) string {
		var out []string
		for _, s := range sliceAt(o, "subjects") {
			m, _ := s.(map[string]any)
			if str(m, "kind") != kind {
				continue
			}
			name := str(m, "name")
			if kind == "ServiceAccount" {
				name = str(m, "namespace") + "/" + name
			}
			out = append(out, name)
		}
		return strings.Join(out, ", ")
	}
}

// csrCondition is kubectl's CONDITION of a CSR: Approved/Denied/Failed
// joined by commas, with Issued once a certificate is there.
func csrCondition(o Obj, _ time.Time) string {
	var conds []string
	approved, denied := false, false
	for _, c := range sliceAt(o, "status", "conditions") {
		m, _ := c.(map[string]any)
		switch str(m, "type") {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			conds = append(conds, "Failed")
		}
	}
	switch {
	case denied:
		conds = append([]string{"Denied"}, conds...)
	case approved:
		conds = append([]string{"Approved"}, conds...)
	default:
		conds = append([]string{"Pending"}, conds...)
	}
	if str(o, "status", "certificate") != "" {
		conds = append(conds, "Issued")
	}
	return strings.Join(conds, ",")
}
