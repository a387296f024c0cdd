package clusterinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// ClusterServiceLabel marks the kube-system services cluster-info lists.
const ClusterServiceLabel = "kubernetes.io/cluster-service"

// NewCommand returns the cluster-info command. Like kubectl it first checks
// the server answers, so a dead control plane is an error, not a line.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster-info",
		Short: "Display addresses of the control plane",
		Long: `Display addresses of the control plane and services with label
kubernetes.io/cluster-service=true in kube-system.`,
		Example: "  kubectl-lite cluster-info",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if _, err := c.Do(ctx, client.Request{Path: "/version"}); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Kubernetes control plane is running at %s\n", c.Host())
			svcs, err := client.Resource[api.Service](c).Namespace("kube-system").List(ctx, client.ListOptions{LabelSelector: ClusterServiceLabel + "=true"})
			if err != nil {
				return err
			}
			for _, s := range svcs.Items {
				name := s.Labels["kubernetes.io/name"]
				if name == "" {
					name = s.Name
				}
				link := s.Name
				if len(s.Spec.Ports) > 0 {
					p := s.Spec.Ports[0]
					if p.Name != "" {
						link += ":" + p.Name
					} else {
						link += ":" + strconv.Itoa(int(p.Port))
					}
				}
				fmt.Fprintf(streams.Out, "%s is running at %s/api/v1/namespaces/%s/services/%s/proxy\n", name, c.Host(), s.Namespace, link)
			}
			fmt.Fprintf(streams.Out, "\nTo further debug and diagnose cluster problems, use 'kubectl-lite cluster-info dump'.\n")
			return nil
		},
	}
	cmd.AddCommand(newDump(streams, g))
	return cmd
}

func newDump(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		namespaces    []string
		allNamespaces bool
	)
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Dump relevant information for debugging and diagnosis",
		Long: `Dump cluster information out suitable for debugging and diagnosing
cluster problems: the nodes, then for each namespace (kube-system and
default unless told otherwise) its events, deployments, replica sets,
services and pods as JSON, and the logs of every container.`,
		Example: `  kubectl-lite cluster-info dump
  kubectl-lite cluster-info dump --namespaces default,kube-system
  kubectl-lite cluster-info dump --all-namespaces`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			out := streams.Out
			if err := dumpList(ctx, c, out, "nodes", ""); err != nil {
				return err
			}
			nss := namespaces
			if allNamespaces {
				l, err := client.Resource[api.Namespace](c).List(ctx, client.ListOptions{})
				if err != nil {
					return err
				}
				nss = nil
				for _, n := range l.Items {
					nss = append(nss, n.Name)
				}
			}
			if len(nss) == 0 {
				nss = []string{"kube-system", "default"}
			}
			for _, ns := range nss {
				for _, r := range []string{"events", "deployments", "replicasets", "services", "pods"} {
					if err := dumpList(ctx, c, out, r, ns); err != nil {
						return err
					}
				}
				pods, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{})
				if err != nil {
					return err
				}
				sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
				for _, p := range pods.Items {
					for _, ctr := range p.Spec.Containers {
						fmt.Fprintf(out, "==== START logs for container %s of pod %s/%s ====\n", ctr.Name, ns, p.Name)
						if err := copyLog(ctx, c, out, ns, p.Name, ctr.Name); err != nil {
							fmt.Fprintf(out, "Request log error: %s\n", cli.FormatError(err))
						}
						fmt.Fprintf(out, "==== END logs for container %s of pod %s/%s ====\n", ctr.Name, ns, p.Name)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&namespaces, "namespaces", nil, "A comma separated list of namespaces to dump.")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If true, dump all namespaces.  If true, --namespaces is ignored.")
	return cmd
}

// dumpList writes the list of resource in ns as indented JSON.
func dumpList(ctx context.Context, c *client.Client, out io.Writer, resource, ns string) error {
	info, ok := api.FindResource(resource)
	if !ok {
		return fmt.Errorf("the server doesn't have a resource type %q", resource)
	}
	l, err := c.Dynamic(info).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		return err
	}
	items := make([]any, len(l.Items))
	for i, u := range l.Items {
		items[i] = u.Object
	}
	b, err := json.MarshalIndent(map[string]any{"kind": info.Kind + "List", "apiVersion": info.GroupVersion(),
		"metadata": map[string]any{"resourceVersion": l.ListMeta.ResourceVersion}, "items": items}, "", "    ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", strings.ToLower(resource), err)
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

func copyLog(ctx context.Context, c *client.Client, out io.Writer, ns, pod, container string) error {
	body, err := client.Resource[api.Pod](c).Namespace(ns).Subresource(pod, "log").Param("container", container).Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(out, body)
	return err
}
