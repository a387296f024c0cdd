package run

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns "run": a Pod from an image, as kubectl run makes
// it. Attaching to it (-i/-t/--rm) is not offered.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen                       write.Generator
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
			return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md,
				"spec": map[string]any{"containers": []any{ctr}, "dnsPolicy": "ClusterFirst", "restartPolicy": restart}, "status": map[string]any{}})
		},
	}
	gen.Bind(cmd)
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
