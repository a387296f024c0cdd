package top

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

const metricsPath = "/apis/metrics.k8s.io/v1beta1"

// metricsCreationDelay is how long kubectl waits after a pod's creation
// before it calls missing metrics an error.
const metricsCreationDelay = 2 * time.Minute

type objectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type nodeMetrics struct {
	Metadata objectMeta       `json:"metadata"`
	Usage    api.ResourceList `json:"usage"`
}

type containerMetrics struct {
	Name  string           `json:"name"`
	Usage api.ResourceList `json:"usage"`
}

type podMetrics struct {
	Metadata   objectMeta         `json:"metadata"`
	Containers []containerMetrics `json:"containers"`
}

// NewCommand returns "top" with its node and pod subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Display resource (CPU/memory) usage",
		Long: `Display resource (CPU/memory) usage.

The top command allows you to see the resource consumption for nodes or pods.

This command requires Metrics Server to be correctly configured and working on the server.`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newNodeCommand(streams, g), newPodCommand(streams, g))
	return cmd
}

// metricsAvailable is kubectl's SupportedMetricsAPIVersionAvailable: the
// server lists metrics.k8s.io/v1beta1.
func metricsAvailable(ctx context.Context, c *client.Client) error {
	b, err := c.Do(ctx, client.Request{Path: "/apis"})
	if err != nil {
		return err
	}
	var list struct {
		Groups []struct {
			Name     string `json:"name"`
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	for _, g := range list.Groups {
		if g.Name != "metrics.k8s.io" {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == "v1beta1" {
				return nil
			}
		}
	}
	return errors.New("Metrics API not available")
}

func getJSON(ctx context.Context, c *client.Client, path string, q url.Values, into any) error {
	b, err := c.Do(ctx, client.Request{Path: path, Query: q})
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func checkSortBy(s string) error {
	if s != "" && s != "cpu" && s != "memory" {
		return errors.New("--sort-by accepts only cpu or memory")
	}
	return nil
}

func newNodeCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var selector, sortBy string
	var noHeaders, showCapacity bool
	cmd := &cobra.Command{
		Use:     "node [NAME | -l label]",
		Aliases: []string{"nodes", "no"},
		Short:   "Display resource (CPU/memory) usage of nodes",
		Example: `  kubectl-lite top node
  kubectl-lite top node NODE_NAME`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("%s", cmd.Use)
			}
			if err := checkSortBy(sortBy); err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			if name != "" && selector != "" {
				return errors.New("only one of NAME or --selector can be provided")
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := metricsAvailable(ctx, c); err != nil {
				return err
			}
			var metrics []nodeMetrics
			q := url.Values{}
			if selector != "" {
				q.Set("labelSelector", selector)
			}
			if name != "" {
				var m nodeMetrics
				if err := getJSON(ctx, c, metricsPath+"/nodes/"+name, nil, &m); err != nil {
					return err
				}
				metrics = []nodeMetrics{m}
			} else {
				var list struct {
					Items []nodeMetrics `json:"items"`
				}
				if err := getJSON(ctx, c, metricsPath+"/nodes", q, &list); err != nil {
					return err
				}
				metrics = list.Items
			}
			if len(metrics) == 0 {
				return errors.New("metrics not available yet")
			}
			var nodes []api.Node
			if name != "" {
				n, err := client.Resource[api.Node](c).Get(ctx, name)
				if err != nil {
					return err
				}
				nodes = []api.Node{*n}
			} else {
				list, err := client.Resource[api.Node](c).List(ctx, client.ListOptions{LabelSelector: selector})
				if err != nil {
					return err
				}
				nodes = list.Items
			}
			available := map[string]api.ResourceList{}
			for _, n := range nodes {
				available[n.Name] = n.Status.Allocatable
				if showCapacity {
					available[n.Name] = n.Status.Capacity
				}
			}
			return printNodes(streams.Out, metrics, available, noHeaders, sortBy)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	f.StringVar(&sortBy, "sort-by", "", "If non-empty, sort nodes list using specified field. The field can be either 'cpu' or 'memory'.")
	f.BoolVar(&noHeaders, "no-headers", false, "If present, print output without headers")
	f.BoolVar(&showCapacity, "show-capacity", false, "Print node resources based on Capacity instead of Allocatable(default) of the nodes.")
	return cmd
}

func newPodCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var selector, sortBy string
	var noHeaders, containers, allNamespaces, sum bool
	cmd := &cobra.Command{
		Use:     "pod [NAME | -l label]",
		Aliases: []string{"pods", "po"},
		Short:   "Display resource (CPU/memory) usage of pods",
		Example: `  kubectl-lite top pod
  kubectl-lite top pod --namespace=NAMESPACE
  kubectl-lite top pod POD_NAME --containers
  kubectl-lite top pod -l name=myLabel`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("%s", cmd.Use)
			}
			if err := checkSortBy(sortBy); err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			if name != "" && selector != "" {
				return errors.New("only one of NAME or selector can be provided")
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := metricsAvailable(ctx, c); err != nil {
				return err
			}
			base := metricsPath + "/namespaces/" + ns + "/pods"
			if allNamespaces {
				base = metricsPath + "/pods"
			}
			var metrics []podMetrics
			if name != "" {
				var m podMetrics
				if err := getJSON(ctx, c, base+"/"+name, nil, &m); err != nil {
					return err
				}
				metrics = []podMetrics{m}
			} else {
				q := url.Values{}
				if selector != "" {
					q.Set("labelSelector", selector)
				}
				var list struct {
					Items []podMetrics `json:"items"`
				}
				if err := getJSON(ctx, c, base, q, &list); err != nil {
					return err
				}
				metrics = list.Items
			}
			if len(metrics) == 0 {
				if err := verifyEmpty(ctx, c, ns, name, selector); err != nil {
					return err
				}
				if allNamespaces {
					fmt.Fprintln(streams.ErrOut, "No resources found")
				} else {
					fmt.Fprintf(streams.ErrOut, "No resources found in %s namespace.\n", ns)
				}
			}
			return printPods(streams.Out, metrics, containers, allNamespaces, noHeaders, sortBy, sum)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	f.StringVar(&sortBy, "sort-by", "", "If non-empty, sort pods list using specified field. The field can be either 'cpu' or 'memory'.")
	f.BoolVar(&noHeaders, "no-headers", false, "If present, print output without headers.")
	f.BoolVar(&containers, "containers", false, "If present, print usage of containers within a pod.")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	f.BoolVar(&sum, "sum", false, "Print the sum of the resource usage")
	return cmd
}

// verifyEmpty is kubectl's verifyEmptyMetrics: no metrics for pods older
// than two minutes is an error; for younger ones, or none, "not yet".
func verifyEmpty(ctx context.Context, c *client.Client, ns, name, selector string) error {
	var pods []api.Pod
	if name != "" {
		p, err := client.Resource[api.Pod](c).Namespace(ns).Get(ctx, name)
		if err != nil {
			return err
		}
		pods = []api.Pod{*p}
	} else {
		list, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		pods = list.Items
	}
	for _, p := range pods {
		if age := time.Since(p.CreationTimestamp.Time); age > metricsCreationDelay {
			return fmt.Errorf("Metrics not available for pod %s/%s, age: %s", p.Namespace, p.Name, age.String())
		}
	}
	return errors.New("metrics not available yet")
}

var measured = []api.ResourceName{api.ResourceCPU, api.ResourceMemory}

// usage prints one resource as kubectl top does: millicores, mebibytes.
func usage(res api.ResourceName, q resource.Quantity) string {
	switch res {
	case api.ResourceCPU:
		return fmt.Sprintf("%vm", q.MilliValue())
	case api.ResourceMemory:
		return fmt.Sprintf("%vMi", q.Value()/(1024*1024))
	}
	return fmt.Sprintf("%v", q.Value())
}

// line is kubectl's printMetricsLine: the name, each resource's usage and,
// when available is known, its percentage.
func line(w io.Writer, name string, m, available api.ResourceList) {
	fmt.Fprintf(w, "%v\t", name)
	for _, res := range measured {
		q := m[res]
		fmt.Fprintf(w, "%s\t", usage(res, q))
		if a, ok := available[res]; ok {
			fraction := 0.0
			if !a.IsZero() {
				fraction = float64(q.MilliValue()) / float64(a.MilliValue()) * 100
			}
			fmt.Fprintf(w, "%d%%\t", int64(fraction))
		}
	}
	fmt.Fprint(w, "\n")
}

type nodeSorter struct {
	m      []nodeMetrics
	sortBy string
}

func (s nodeSorter) Len() int      { return len(s.m) }
func (s nodeSorter) Swap(i, j int) { s.m[i], s.m[j] = s.m[j], s.m[i] }
func (s nodeSorter) Less(i, j int) bool {
	switch s.sortBy {
	case "cpu":
		return s.m[i].Usage.Cpu().MilliValue() > s.m[j].Usage.Cpu().MilliValue()
	case "memory":
		return s.m[i].Usage.Memory().Value() > s.m[j].Usage.Memory().Value()
	}
	return s.m[i].Metadata.Name < s.m[j].Metadata.Name
}

func printNodes(out io.Writer, metrics []nodeMetrics, available map[string]api.ResourceList, noHeaders bool, sortBy string) error {
	w := printers.NewTabWriter(out)
	sort.Sort(nodeSorter{metrics, sortBy})
	if !noHeaders {
		fmt.Fprint(w, "NAME\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)\t\n")
	}
	for _, m := range metrics {
		line(w, m.Metadata.Name, m.Usage, available[m.Metadata.Name])
		delete(available, m.Metadata.Name)
	}
	for name := range available {
		fmt.Fprintf(w, "%v\t", name)
		for range measured {
			fmt.Fprint(w, "<unknown>\t<unknown>\t")
		}
		fmt.Fprint(w, "\n")
	}
	return w.Flush()
}

// podUsage sums a pod's containers.
func podUsage(m podMetrics) api.ResourceList {
	out := api.ResourceList{}
	for _, res := range measured {
		q := resource.MustParse("0")
		for _, c := range m.Containers {
			q.Add(c.Usage[res])
		}
		out[res] = q
	}
	return out
}

type podSorter struct {
	m             []podMetrics
	usage         []api.ResourceList
	withNamespace bool
	sortBy        string
}

func (s podSorter) Len() int { return len(s.m) }
func (s podSorter) Swap(i, j int) {
	s.m[i], s.m[j] = s.m[j], s.m[i]
	s.usage[i], s.usage[j] = s.usage[j], s.usage[i]
}
func (s podSorter) Less(i, j int) bool {
	switch s.sortBy {
	case "cpu":
		return s.usage[i].Cpu().MilliValue() > s.usage[j].Cpu().MilliValue()
	case "memory":
		return s.usage[i].Memory().Value() > s.usage[j].Memory().Value()
	}
	if s.withNamespace && s.m[i].Metadata.Namespace != s.m[j].Metadata.Namespace {
		return s.m[i].Metadata.Namespace < s.m[j].Metadata.Namespace
	}
	return s.m[i].Metadata.Name < s.m[j].Metadata.Name
}

type containerSorter struct {
	c      []containerMetrics
	sortBy string
}

func (s containerSorter) Len() int      { return len(s.c) }
func (s containerSorter) Swap(i, j int) { s.c[i], s.c[j] = s.c[j], s.c[i] }
func (s containerSorter) Less(i, j int) bool {
	switch s.sortBy {
	case "cpu":
		return s.c[i].Usage.Cpu().MilliValue() > s.c[j].Usage.Cpu().MilliValue()
	case "memory":
		return s.c[i].Usage.Memory().Value() > s.c[j].Usage.Memory().Value()
	}
	return s.c[i].Name < s.c[j].Name
}

func printPods(out io.Writer, metrics []podMetrics, containers, withNamespace, noHeaders bool, sortBy string, sum bool) error {
	if len(metrics) == 0 {
		return nil
	}
	w := printers.NewTabWriter(out)
	width := 3
	if !noHeaders {
		if withNamespace {
			fmt.Fprint(w, "NAMESPACE\t")
			width++
		}
		if containers {
			fmt.Fprint(w, "POD\t")
			width++
		}
		fmt.Fprint(w, "NAME\tCPU(cores)\tMEMORY(bytes)\t\n")
	}
	usages := make([]api.ResourceList, len(metrics))
	if sortBy != "" {
		for i, m := range metrics {
			usages[i] = podUsage(m)
		}
	}
	sort.Sort(podSorter{metrics, usages, withNamespace, sortBy})
	for _, m := range metrics {
		if containers {
			sort.Sort(containerSorter{m.Containers, sortBy})
			for _, c := range m.Containers {
				if withNamespace {
					fmt.Fprintf(w, "%v\t", m.Metadata.Namespace)
				}
				fmt.Fprintf(w, "%v\t", m.Metadata.Name)
				line(w, c.Name, c.Usage, nil)
			}
			continue
		}
		if withNamespace {
			fmt.Fprintf(w, "%v\t", m.Metadata.Namespace)
		}
		line(w, m.Metadata.Name, podUsage(m), nil)
	}
	if sum {
		total := api.ResourceList{}
		for _, res := range measured {
			q := resource.MustParse("0")
			for _, m := range metrics {
				for _, c := range m.Containers {
					q.Add(c.Usage[res])
				}
			}
			total[res] = q
		}
		for range width - 2 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprint(w, "________\t________\t\n")
		for range width - 3 {
			fmt.Fprint(w, "\t")
		}
		line(w, "", total, nil)
	}
	return w.Flush()
}
