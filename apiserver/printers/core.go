package printers

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/minik8s/minik8s/api"
)

var nodePrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Status", "string", "The status of the node"),
	col("Roles", "string", "The roles of the node"),
	ageColumn,
	col("Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]),
}, wide(
	col("Internal-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	col("External-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	col("OS-Image", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]),
	col("Kernel-Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]),
	col("Container-Runtime", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]),
)...), nodeRow)

var namespacePrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Status", "string", "The status of the namespace"), ageColumn,
}, func(ns *api.Namespace, now time.Time) api.TableRow {
	return cells(ns.Name, string(ns.Status.Phase), age(&ns.ObjectMeta, now))
})

var servicePrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"]),
	col("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]),
	col("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]),
	col("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"]),
	ageColumn,
	wide(col("Selector", "string", corev1.ServiceSpec{}.SwaggerDoc()["selector"]))[0],
}, serviceRow)

var endpointsPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"]), ageColumn,
}, func(e *api.Endpoints, now time.Time) api.TableRow {
	return cells(e.Name, endpoints(e), age(&e.ObjectMeta, now))
})

var configMapPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]), ageColumn,
}, func(cm *api.ConfigMap, now time.Time) api.TableRow {
	return cells(cm.Name, int64(len(cm.Data)+len(cm.BinaryData)), age(&cm.ObjectMeta, now))
})

var secretPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Type", "string", corev1.Secret{}.SwaggerDoc()["type"]),
	col("Data", "string", corev1.Secret{}.SwaggerDoc()["data"]),
	ageColumn,
}, func(s *api.Secret, now time.Time) api.TableRow {
	return cells(s.Name, string(s.Type), int64(len(s.Data)), age(&s.ObjectMeta, now))
})

var eventDoc = corev1.Event{}.SwaggerDoc()

var coreEventPrinter = printer([]api.TableColumnDefinition{
	col("Last Seen", "string", eventDoc["lastTimestamp"]),
	col("Type", "string", eventDoc["type"]),
	col("Reason", "string", eventDoc["reason"]),
	col("Object", "string", eventDoc["involvedObject"]),
	wide(col("Subobject", "string", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]))[0],
	wide(col("Source", "string", eventDoc["source"]))[0],
	col("Message", "string", eventDoc["message"]),
	wide(col("First Seen", "string", eventDoc["firstTimestamp"]))[0],
	wide(col("Count", "string", eventDoc["count"]))[0],
	{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: metaDoc["name"]},
}, eventRow)

// events.k8s.io Events print as the core Events they are stored as,
// as kube-apiserver prints them.
var eventPrinter = &Printer{Columns: coreEventPrinter.Columns, row: func(obj api.Object, now time.Time) (api.TableRow, bool) {
	if e, ok := obj.(*api.EventV1); ok {
		obj = api.EventFromV1(e)
	}
	return coreEventPrinter.row(obj, now)
}}

// nodeRow is kube's printNode: STATUS from the Ready condition (Ready,
// NotReady, Unknown when absent) plus SchedulingDisabled when cordoned;
// ROLES from node-role.kubernetes.io/ROLE and kubernetes.io/role labels;
// the kernel with the architecture.
func nodeRow(n *api.Node, now time.Time) api.TableRow {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type != api.NodeReady {
			continue
		}
		// The last Ready condition counts, as in kube's condition map.
		status = []string{"Ready"}
		if c.Status != api.ConditionTrue {
			status = []string{"NotReady"}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	info := n.Status.NodeInfo
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := unknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return cells(n.Name, strings.Join(status, ","), orNone(strings.Join(NodeRoles(n.Labels), ",")),
		age(&n.ObjectMeta, now), info.KubeletVersion,
		nodeAddress(n, api.NodeInternalIP), nodeAddress(n, api.NodeExternalIP),
		unknown(info.OSImage), kernel, unknown(info.ContainerRuntimeVersion))
}

const (
	nodeRolePrefix = "node-role.kubernetes.io/"
	nodeRoleLabel  = "kubernetes.io/role"
)

// NodeRoles are the roles node labels give, sorted: the ROLE of each
// node-role.kubernetes.io/ROLE label and the value of kubernetes.io/role.
func NodeRoles(labels map[string]string) []string {
	var roles []string
	for k, v := range labels {
		switch {
		case strings.HasPrefix(k, nodeRolePrefix):
			if r := strings.TrimPrefix(k, nodeRolePrefix); r != "" {
				roles = append(roles, r)
			}
		case k == nodeRoleLabel && v != "":
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	return slices.Compact(roles)
}

func nodeAddress(n *api.Node, typ api.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == typ {
			return a.Address
		}
	}
	return "<none>"
}

// serviceRow is kube's printService; the server prints it wide, so
// load-balancer addresses are never cut short.
func serviceRow(s *api.Service, now time.Time) api.TableRow {
	clusterIP := s.Spec.ClusterIP
	if clusterIP == "" && len(s.Spec.ClusterIPs) > 0 {
		clusterIP = s.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(s.Spec.Ports))
	for i, p := range s.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return cells(s.Name, string(s.Spec.Type), orNone(clusterIP), serviceExternalIP(s),
		orNone(strings.Join(ports, ",")), age(&s.ObjectMeta, now), labels.FormatLabels(s.Spec.Selector))
}

func serviceExternalIP(s *api.Service) string {
	switch s.Spec.Type {
	case api.ServiceTypeClusterIP, api.ServiceTypeNodePort:
		return orNone(strings.Join(s.Spec.ExternalIPs, ","))
	case api.ServiceTypeLoadBalancer:
		var lb []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				lb = append(lb, in.IP)
			} else if in.Hostname != "" {
				lb = append(lb, in.Hostname)
			}
		}
		slices.Sort(lb)
		lb = slices.Compact(lb)
		if all := append(lb, s.Spec.ExternalIPs...); len(all) > 0 {
			return strings.Join(all, ",")
		}
		return "<pending>"
	case api.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

// moreThan joins the first max items and says how many more there were:
// "a,b,c + 2 more...".
func moreThan(list []string, count, max int) string {
	s := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", s, count-max)
	}
	return s
}

// endpoints is kube's formatEndpoints: ip:port of every ready address and
// port (ip alone without ports), three at most.
func endpoints(e *api.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count := 0
	add := func(s string) {
		if len(list) < max {
			list = append(list, s)
		}
		count++
	}
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return moreThan(list, count, max)
}

// eventRow is kube's printEvent: times fall back from lastTimestamp to
// firstTimestamp to eventTime, a series counts and dates the event, and
// OBJECT is "kind/name" with the kind in lower case.
func eventRow(e *api.Event, now time.Time) api.TableRow {
	first := since(e.FirstTimestamp.Time, now)
	if e.FirstTimestamp.IsZero() {
		first = since(e.EventTime.Time, now)
	}
	last := since(e.LastTimestamp.Time, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = since(e.Series.LastObservedTime.Time, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	source := component
	if instance != "" {
		source += ", " + instance
	}
	return cells(last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source,
		strings.TrimSpace(e.Message), first, int64(count), e.Name)
}
