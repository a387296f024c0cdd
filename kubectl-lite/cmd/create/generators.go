package create

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// addGenerators adds kubectl's most used "create KIND NAME" forms.
func addGenerators(create *cobra.Command, streams cli.Streams, g *cli.Globals) {
	create.AddCommand(
		newCreateNamespace(streams, g),
		newCreateConfigMap(streams, g),
		newCreateSecret(streams, g),
		newCreateDeployment(streams, g),
		newCreateJob(streams, g),
		newCreateCronJob(streams, g),
		newCreateService(streams, g),
		newCreateServiceAccount(streams, g),
		newCreateToken(streams, g),
		newCreateIngress(streams, g),
	)
	create.AddCommand(withFlagUsage(
		newCreateRole(streams, g),
		newCreateClusterRole(streams, g),
		newCreateRoleBinding(streams, g),
		newCreateClusterRoleBinding(streams, g),
		newCreateQuota(streams, g),
		newCreatePriorityClass(streams, g),
		newCreatePodDisruptionBudget(streams, g),
	)...)
}

func newCreateNamespace(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var gen write.Generator
	cmd := &cobra.Command{
		Use:     "namespace NAME [--dry-run=server|client|none]",
		Aliases: []string{"ns"},
		Short:   "Create a namespace with the specified name",
		Long:    "Create a namespace with the specified name.",
		Example: "  kubectl-lite create namespace my-namespace",
		Args:    exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": args[0]}})
		},
	}
	gen.Bind(cmd)
	return cmd
}

func exactlyOneName(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("exactly one NAME is required, got %d", len(args))
	}
	return nil
}

func newCreateConfigMap(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen = write.Generator{Failed: "failed to create configmap: "}
		src sources
	)
	cmd := &cobra.Command{
		Use:     "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		Aliases: []string{"cm"},
		Short:   "Create a config map from a local file, directory or literal value",
		Long:    "Create a config map based on a file, directory, or specified literal value.",
		Example: `  kubectl-lite create configmap my-config --from-file=path/to/bar
  kubectl-lite create configmap my-config --from-literal=key1=config1 --from-literal=key2=config2`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			kv, err := src.read()
			if err != nil {
				return err
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": args[0]}}
			data, binary := map[string]any{}, map[string]any{}
			for k, v := range kv {
				if isText(v) {
					data[k] = string(v)
				} else {
					binary[k] = base64.StdEncoding.EncodeToString(v)
				}
			}
			if len(data) > 0 {
				obj["data"] = data
			}
			if len(binary) > 0 {
				obj["binaryData"] = binary
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	src.bind(cmd)
	return cmd
}

// isText says whether v can be a ConfigMap's data value: UTF-8 text, as
// kubectl decides between data and binaryData.
func isText(v []byte) bool { return utf8.Valid(v) }

func newCreateSecret(streams cli.Streams, g *cli.Globals) *cobra.Command {
	secret := &cobra.Command{
		Use:   "secret (docker-registry | generic | tls) NAME",
		Short: "Create a secret using a specified subcommand",
		Long:  "Create a secret with specified type. A generic secret is made from local files, directories or literal values.",
	}
	var (
		// kubectl's words, without a colon.
		gen = write.Generator{Failed: "failed to create secret "}
		src sources
		typ string
	)
	generic := &cobra.Command{
		Use:   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		Short: "Create a secret from a local file, directory, or literal value",
		Long:  "Create a secret based on a file, directory, or specified literal value.",
		Example: `  kubectl-lite create secret generic my-secret --from-file=path/to/bar
  kubectl-lite create secret generic my-secret --from-literal=key1=supersecret --from-literal=key2=topsecret`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			kv, err := src.read()
			if err != nil {
				return err
			}
			data := map[string]any{}
			for k, v := range kv {
				data[k] = base64.StdEncoding.EncodeToString(v)
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": args[0]}}
			if len(data) > 0 {
				obj["data"] = data
			}
			if typ != "" {
				obj["type"] = typ
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(generic)
	src.bind(generic)
	generic.Flags().StringVar(&typ, "type", "", "The type of secret to create")
	secret.AddCommand(generic)
	secret.AddCommand(withFlagUsage(newCreateSecretDockerRegistry(streams, g), newCreateSecretTLS(streams, g))...)
	return secret
}

// containerName is kubectl's container name for an image:
// "registry:5000/team/nginx:1.25" gives "nginx".
func containerName(image string) string {
	n := image
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	n, _, _ = strings.Cut(n, "@")
	n, _, _ = strings.Cut(n, ":")
	n = strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9-]+`).ReplaceAllString(n, "-"))
	return strings.Trim(n, "-")
}

func newCreateDeployment(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen      = write.Generator{Failed: "failed to create deployment: "}
		images   []string
		replicas int32
		port     int32
	)
	cmd := &cobra.Command{
		Use:     "deployment NAME --image=image -- [COMMAND] [args...]",
		Aliases: []string{"deploy"},
		Short:   "Create a deployment with the specified name",
		Long:    "Create a deployment with the specified name.",
		Example: `  kubectl-lite create deployment my-dep --image=busybox -- date
  kubectl-lite create deployment my-dep --image=nginx --replicas=3 --port=80
  kubectl-lite create deployment web --image=nginx --dry-run=client -o yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			command := args[1:]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash != 1 {
				return fmt.Errorf("exactly one NAME is required, got %d", dash)
			}
			if len(images) == 0 {
				return fmt.Errorf("required flag(s) \"image\" not set")
			}
			if len(images) > 1 && len(command) > 0 {
				return fmt.Errorf("cannot specify multiple --image options and command")
			}
			labels := map[string]any{"app": name}
			var ctrs []any
			for _, img := range images {
				c := map[string]any{"name": containerName(img), "image": img, "resources": map[string]any{}}
				if len(command) > 0 {
					c["command"] = command
				}
				if port >= 0 {
					c["ports"] = []any{map[string]any{"containerPort": port}}
				}
				ctrs = append(ctrs, c)
			}
			obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": name, "labels": labels},
				"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels}, "strategy": map[string]any{},
					"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"containers": ctrs}}},
				"status": map[string]any{}}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringSliceVar(&images, "image", nil, "Image names to run. A deployment can have multiple images set for multi-container pod.")
	cmd.Flags().Int32VarP(&replicas, "replicas", "r", 1, "Number of replicas to create. Default is 1.")
	cmd.Flags().Int32Var(&port, "port", -1, "The containerPort that this deployment exposes.")
	return cmd
}

func newCreateService(streams cli.Streams, g *cli.Globals) *cobra.Command {
	svc := &cobra.Command{
		Use:     "service (clusterip | externalname | loadbalancer | nodeport) NAME",
		Aliases: []string{"svc"},
		Short:   "Create a service using a specified subcommand",
		Long:    "Create a service using a specified subcommand. Its selector is app=NAME, as kubectl sets it.",
	}
	for _, typ := range []string{"ClusterIP", "NodePort"} {
		var (
			gen       = write.Generator{Failed: "failed to create " + typ + " service: "}
			tcp       []string
			clusterIP string
			nodePort  int32
		)
		sub := &cobra.Command{
			Use:     strings.ToLower(typ) + " NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]",
			Short:   "Create a " + typ + " service",
			Long:    "Create a " + typ + " service with the specified name.",
			Example: "  kubectl-lite create service " + strings.ToLower(typ) + " my-svc --tcp=5678:8080",
			Args:    exactlyOneName,
			RunE: func(cmd *cobra.Command, args []string) error {
				name := args[0]
				if len(tcp) == 0 && clusterIP != "None" {
					return fmt.Errorf("at least one tcp port specifier must be provided")
				}
				var ports []any
				for _, spec := range tcp {
					ps, ts, hasTarget := strings.Cut(spec, ":")
					p, err := strconv.Atoi(ps)
					if err != nil {
						return fmt.Errorf("invalid --tcp %q: port %q is not a number", spec, ps)
					}
					var target any = p
					if hasTarget {
						if tn, err := strconv.Atoi(ts); err == nil {
							target = tn
						} else {
							target = ts
						}
					}
					port := map[string]any{"name": strings.ReplaceAll(spec, ":", "-"), "port": p, "targetPort": target, "protocol": "TCP"}
					if nodePort > 0 {
						port["nodePort"] = nodePort
					}
					ports = append(ports, port)
				}
				spec := map[string]any{"type": typ, "selector": map[string]any{"app": name}}
				if len(ports) > 0 {
					spec["ports"] = ports
				}
				if clusterIP != "" {
					spec["clusterIP"] = clusterIP
				}
				return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Service",
					"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}}, "spec": spec, "status": map[string]any{"loadBalancer": map[string]any{}}})
			},
		}
		gen.Bind(sub)
		sub.Flags().StringSliceVar(&tcp, "tcp", nil, "Port pairs can be specified as '<port>:<targetPort>'.")
		if typ == "ClusterIP" {
			sub.Flags().StringVar(&clusterIP, "clusterip", "", "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).")
		} else {
			sub.Flags().Int32Var(&nodePort, "node-port", 0, "Port used to expose the service on each node in a cluster.")
		}
		svc.AddCommand(sub)
	}
	svc.AddCommand(newCreateServiceOfType(streams, g, corev1.ServiceTypeLoadBalancer), newCreateServiceOfType(streams, g, corev1.ServiceTypeExternalName))
	return svc
}
