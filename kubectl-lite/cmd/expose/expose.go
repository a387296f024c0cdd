package apply

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// NewRunCommand returns "run": a Pod from an image, as kubectl run makes
// it. Attaching to it (-i/-t/--rm) is not offered.
func NewRunCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen                       generated
		image, restart, pull      string
		labels, annotations, envs []string
		port                      int32
		command                   bool
	)
	cmd := &cobra.Command{
		Use:   "run NAME --image=image [--env=\"key=value\"] [--port=port] [--dry-run=server|client] [--command] -- [COMMAND] [args...]",
		Short: "Run a particular image on the cluster",
		Long: `Create and run a particular image in a pod.

The arguments after -- are the container's args, or with --command its
command.`,
		Example: `  kubectl-lite run nginx --image=nginx
  kubectl-lite run hazelcast --image=hazelcast/hazelcast --port=5701 --env="DNS_DOMAIN=cluster"
  kubectl-lite run nginx --image=nginx --dry-run=client -o yaml
  kubectl-lite run busybox --image=busybox --restart=Never --command -- sleep 3600`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 1 || (dash < 0 && len(args) > 1) {
				return fmt.Errorf("NAME is required for run, and the container's arguments follow --")
			}
			name, rest := args[0], args[1:]
			if image == "" {
				return fmt.Errorf("required flag(s) \"image\" not set")
			}
			switch restart {
			case "Always", "OnFailure", "Never":
			default:
				return fmt.Errorf("invalid restart policy: %s", restart)
			}
			lbl := map[string]any{"run": name}
			if len(labels) > 0 {
				lbl = map[string]any{}
				for _, kv := range labels {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return fmt.Errorf("invalid label spec: %s", kv)
					}
					lbl[k] = v
				}
			}
			ctr := map[string]any{"name": name, "image": image, "resources": map[string]any{}}
			if len(rest) > 0 {
				field := "args"
				if command {
					field = "command"
				}
				ctr[field] = rest
			}
			if pull != "" {
				ctr["imagePullPolicy"] = pull
			}
			if port > 0 {
				ctr["ports"] = []any{map[string]any{"containerPort": port}}
			}
			var env []any
			for _, kv := range envs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("invalid env: %s", kv)
				}
				env = append(env, map[string]any{"name": k, "value": v})
			}
			if len(env) > 0 {
				ctr["env"] = env
			}
			md := map[string]any{"name": name, "labels": lbl}
			if len(annotations) > 0 {
				ann := map[string]any{}
				for _, kv := range annotations {
					k, v, _ := strings.Cut(kv, "=")
					ann[k] = v
				}
				md["annotations"] = ann
			}
			return gen.run(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md,
				"spec": map[string]any{"containers": []any{ctr}, "dnsPolicy": "ClusterFirst", "restartPolicy": restart}, "status": map[string]any{}})
		},
	}
	gen.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&image, "image", "", "The image for the container to run.")
	f.StringVar(&restart, "restart", "Always", "The restart policy for this Pod.  Legal values [Always, OnFailure, Never].")
	f.StringVar(&pull, "image-pull-policy", "", "The image pull policy for the container.  If left empty, this value will not be specified by the client and defaulted by the server.")
	f.StringSliceVarP(&labels, "labels", "l", nil, "Comma separated labels to apply to the pod. Will override previous values.")
	f.StringArrayVar(&annotations, "annotations", nil, "Annotations to apply to the pod.")
	f.StringArrayVar(&envs, "env", nil, "Environment variables to set in the container.")
	f.Int32Var(&port, "port", -1, "The port that this container exposes.")
	f.BoolVar(&command, "command", false, "If true and extra arguments are present, use them as the 'command' field in the container, rather than the 'args' field which is the default.")
	return cmd
}

// NewExposeCommand returns "expose": a Service selecting the pods of a
// deployment, replica set, pod or service.
func NewExposeCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen                              generated
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
			sel, err := resource.Parse(args, ns, false)
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
			gen.verb = "exposed"
			return gen.run(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": smd, "spec": svcSpec,
				"status": map[string]any{"loadBalancer": map[string]any{}}})
		},
	}
	gen.bind(cmd)
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
