package autoscale

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	kresource "github.com/minik8s/minik8s/kubectl-lite/resource"
)

// NewCommand returns the autoscale command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		minR, maxR, cpuPercent int32
		cpu, memory, name      string
	)
	cmd := &cobra.Command{
		Use:   "autoscale (-f FILENAME | TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu=CPU] [--memory=MEMORY]",
		Short: "Auto-scale a deployment, replica set, stateful set, or replication controller",
		Long: `Creates an autoscaler that automatically chooses and sets the number of pods that run in a Kubernetes cluster.

Looks up a deployment, replica set, stateful set, or replication controller by name and creates an autoscaler that uses the given resource as a reference. An autoscaler can automatically increase or decrease number of pods deployed within the system as needed.`,
		Example: `  kubectl-lite autoscale deployment foo --min=2 --max=10
  kubectl-lite autoscale rc foo --max=5 --cpu=80%
  kubectl-lite autoscale deployment bar --min=3 --max=6 --cpu=500m --memory=200Mi`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("max") {
				return errors.New(`required flag(s) "max" not set`)
			}
			if maxR < 1 {
				return fmt.Errorf("--max=MAXPODS is required and must be at least 1, max: %d", maxR)
			}
			if maxR < minR {
				return fmt.Errorf("--max=MAXPODS must be larger or equal to --min=MINPODS, max: %d, min: %d", maxR, minR)
			}
			if cpuPercent > 0 && cpu != "" {
				return errors.New("--cpu-percent and --cpu are mutually exclusive")
			}
			var metrics []api.MetricSpec
			if cpuPercent > 0 {
				m, err := metric("cpu", strconv.Itoa(int(cpuPercent))+"%")
				if err != nil {
					return err
				}
				metrics = append(metrics, m)
			}
			for _, r := range []struct{ name, value string }{{"cpu", cpu}, {"memory", memory}} {
				if r.value == "" {
					continue
				}
				m, err := metric(r.name, r.value)
				if err != nil {
					return err
				}
				metrics = append(metrics, m)
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
			sel, err := kresource.Parse(args, ns, false)
			if err != nil {
				return err
			}
			refs, err := sel.Expand(ctx, c, ns, client.ListOptions{})
			if err != nil {
				return err
			}
			if len(refs) == 0 {
				return errors.New("no objects passed to autoscale")
			}
			for _, r := range refs {
				if !r.Info.HasSubresource("scale") {
					return fmt.Errorf("cannot autoscale a %s: could not find scale subresource for %s/%s, Resource=%s in discovery information",
						r.Info.Kind, r.Info.Group, r.Info.Version, r.Info.Resource)
				}
				hname := name
				if hname == "" {
					hname = r.Name
				}
				hpa := &api.HorizontalPodAutoscaler{ObjectMeta: api.ObjectMeta{Name: hname, Namespace: r.Namespace},
					Spec: api.HorizontalPodAutoscalerSpec{MaxReplicas: maxR, Metrics: metrics,
						ScaleTargetRef: api.CrossVersionObjectReference{APIVersion: r.Info.GroupVersion(), Kind: r.Info.Kind, Name: r.Name}}}
				if minR > 0 {
					m := minR
					hpa.Spec.MinReplicas = &m
				}
				if _, err := client.Resource[api.HorizontalPodAutoscaler](c).Namespace(r.Namespace).Create(ctx, hpa); err != nil {
					return fmt.Errorf("failed to create HorizontalPodAutoscaler using autoscaling/v2 API: %w", err)
				}
				fmt.Fprintf(streams.Out, "horizontalpodautoscaler.autoscaling/%s autoscaled\n", hname)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32Var(&minR, "min", -1, "The lower limit for the number of pods that can be set by the autoscaler. If it's not specified or negative, the server will apply a default value.")
	f.Int32Var(&maxR, "max", -1, "The upper limit for the number of pods that can be set by the autoscaler. Required.")
	f.StringVar(&cpu, "cpu", "", `Target CPU utilization over all the pods. When specified as a percentage (e.g."70%" for 70% of requested CPU) it will target average utilization. When specified as quantity (e.g."500m" for 500 milliCPU) it will target average value. Value without units is treated as a quantity with miliCPU being the unit (e.g."500" is "500m").`)
	f.StringVar(&memory, "memory", "", `Target memory utilization over all the pods. When specified  as a percentage (e.g."60%" for 60% of requested memory) it will target average utilization. When specified as quantity (e.g."200Mi" for 200 MiB, "1Gi" for 1 GiB) it will target average value. Value without units is treated as a quantity with mebibytes being the unit (e.g."200" is "200Mi").`)
	f.Int32Var(&cpuPercent, "cpu-percent", -1, "The target average CPU utilization (represented as a percent of requested CPU) over all the pods. If it's not specified or negative, a default autoscaling policy will be used.")
	_ = f.MarkDeprecated("cpu-percent", "Use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU).")
	f.StringVar(&name, "name", "", "The name for the newly created object. If not specified, the name of the input resource will be used.")
	return cmd
}

// metric is kubectl's parseResourceInput: "70%" a utilization target, a
// quantity an average value (a bare number in millicores or mebibytes).
func metric(res, input string) (api.MetricSpec, error) {
	input = strings.TrimSpace(input)
	// Fields in autoscaling/v2's order, as kubectl's encoder writes them.
	var target struct {
		Type               string `json:"type"`
		AverageValue       string `json:"averageValue,omitempty"`
		AverageUtilization *int32 `json:"averageUtilization,omitempty"`
	}
	if v, ok := strings.CutSuffix(input, "%"); ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return api.MetricSpec{}, fmt.Errorf("invalid percentage value: %s", v)
		}
		u := int32(n)
		target.Type, target.AverageUtilization = "Utilization", &u
	} else {
		unit := map[string]string{"cpu": "m", "memory": "Mi"}[res]
		if f, err := strconv.ParseFloat(input, 64); err == nil {
			input = strconv.FormatFloat(f, 'g', -1, 64) + unit
		}
		q, err := resource.ParseQuantity(input)
		if err != nil {
			return api.MetricSpec{}, fmt.Errorf("invalid resource %s value: %s", res, input)
		}
		target.Type, target.AverageValue = "AverageValue", q.String()
	}
	b, _ := json.Marshal(struct {
		Name   string `json:"name"`
		Target any    `json:"target"`
	}{res, target})
	return api.MetricSpec{Type: "Resource", Resource: b}, nil
}
