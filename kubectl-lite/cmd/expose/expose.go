package expose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns "expose": a Service selecting the pods of a
// deployment, replica set, pod or service.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen                              write.Generator
		port, targetPort, typ, svcName   string
		protocol, clusterIP, selectorArg string
	)
	cmd := &cobra.Command{
		Use:   "expose (-f FILENAME | TYPE NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] [--type=type]",
		Short: "Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service",
		Long: `Expose a resource as a new Kubernetes service.

The service selects what the resource selects (a pod: its labels) and
takes its port from --port or the first container port.`,
		Example: `  kubectl-lite expose deployment web --port=80 --target-port=8080
  kubectl-lite expose pod valid-pod --port=444 --name=frontend
  kubectl-lite expose deployment web --type=NodePort --port=80`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			sel, err := g.Parse(cmd.Context(), args, ns, false)
			if err != nil {
				return err
			}
			if len(sel.Refs) != 1 {
				return fmt.Errorf("expose takes one resource")
			}
			r := sel.Refs[0]
			c, err := g.Client()
			if err != nil {
				return err
			}
			u, err := c.Dynamic(r.Info).Namespace(r.Namespace).Get(cmd.Context(), r.Name)
			if err != nil {
				return err
			}
			obj := u.Object
			spec, _ := obj["spec"].(map[string]any)
			md, _ := obj["metadata"].(map[string]any)
			var selector map[string]any
			var podSpec map[string]any
			switch r.Info.Kind {
			case "Pod":
				selector, _ = md["labels"].(map[string]any)
				podSpec = spec
			case "Service":
				selector, _ = spec["selector"].(map[string]any)
			case "Deployment", "ReplicaSet":
				s, _ := spec["selector"].(map[string]any)
				selector, _ = s["matchLabels"].(map[string]any)
				if s["matchExpressions"] != nil {
					return fmt.Errorf("couldn't convert expressions - \"%+v\" to map-based selector format", s["matchExpressions"])
				}
				tmpl, _ := spec["template"].(map[string]any)
				podSpec, _ = tmpl["spec"].(map[string]any)
			default:
				return fmt.Errorf("cannot expose a %s", r.Info.Kind)
			}
			if selectorArg != "" {
				selector = map[string]any{}
				for _, kv := range strings.Split(selectorArg, ",") {
					k, v, _ := strings.Cut(kv, "=")
					selector[k] = v
				}
			}
			if len(selector) == 0 {
				return fmt.Errorf("couldn't retrieve selectors via --selector flag or introspection: the %s has no labels to select", strings.ToLower(r.Info.Kind))
			}
			var ports []any
			if port != "" {
				p, err := strconv.Atoi(port)
				if err != nil {
					return fmt.Errorf("invalid --port %q", port)
				}
				ports = append(ports, map[string]any{"port": p, "protocol": protocol})
			} else {
				ports = introspectPorts(r.Info.Kind, spec, podSpec, protocol)
				if len(ports) == 0 {
					return fmt.Errorf("couldn't find port via --port flag or introspection")
				}
			}
			for i, p := range ports {
				pm := p.(map[string]any)
				if targetPort != "" {
					if n, err := strconv.Atoi(targetPort); err == nil {
						pm["targetPort"] = n
					} else {
						pm["targetPort"] = targetPort
					}
				} else if pm["targetPort"] == nil {
					pm["targetPort"] = pm["port"]
				}
				if len(ports) > 1 {
					pm["name"] = "port-" + strconv.Itoa(i+1)
				}
			}
			name := r.Name
			if svcName != "" {
				name = svcName
			}
			svcSpec := map[string]any{"ports": ports, "selector": selector}
			if typ != "" {
				svcSpec["type"] = typ
			}
			if clusterIP != "" {
				svcSpec["clusterIP"] = clusterIP
			}
			labels, _ := md["labels"].(map[string]any)
			smd := map[string]any{"name": name}
			if len(labels) > 0 {
				smd["labels"] = labels
			}
			gen.Verb = "exposed"
			return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": smd, "spec": svcSpec,
				"status": map[string]any{"loadBalancer": map[string]any{}}})
		},
	}
	gen.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&port, "port", "", "The port that the service should serve on. Copied from the resource being exposed, if unspecified")
	f.StringVar(&targetPort, "target-port", "", "Name or number for the port on the container that the service should direct traffic to. Optional.")
	f.StringVar(&typ, "type", "", "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'.")
	f.StringVar(&svcName, "name", "", "The name for the newly created object.")
	f.StringVar(&protocol, "protocol", "TCP", "The network protocol for the service to be created. Default is 'TCP'.")
	f.StringVar(&clusterIP, "cluster-ip", "", "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service.")
	f.StringVar(&selectorArg, "selector", "", "A label selector to use for this service. Only equality-based selector requirements are supported.")
	return cmd
}

// introspectPorts are the ports of a service, or the container ports of a
// pod template, as kubectl expose finds them.
func introspectPorts(kind string, spec, podSpec map[string]any, protocol string) []any {
	var out []any
	if kind == "Service" {
		ps, _ := spec["ports"].([]any)
		for _, p := range ps {
			pm, _ := p.(map[string]any)
			out = append(out, map[string]any{"port": pm["port"], "targetPort": pm["targetPort"], "protocol": pm["protocol"]})
		}
		return out
	}
	ctrs, _ := podSpec["containers"].([]any)
	seen := map[string]bool{}
	for _, c := range ctrs {
		cm, _ := c.(map[string]any)
		ps, _ := cm["ports"].([]any)
		for _, p := range ps {
			pm, _ := p.(map[string]any)
			key := fmt.Sprint(pm["containerPort"])
			if seen[key] {
				continue
			}
			seen[key] = true
			proto, _ := pm["protocol"].(string)
			if proto == "" {
				proto = protocol
			}
			out = append(out, map[string]any{"port": pm["containerPort"], "protocol": proto})
		}
	}
	return out
}
