package create

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// asMap turns a typed object, built as kubectl builds it, into the map
// Generator.Create sends and prints.
func asMap(typed any) (map[string]any, error) {
	b, err := json.Marshal(typed)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func newCreateQuota(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen         = write.Generator{Failed: "failed to create quota: "}
		hard, scope string
	)
	cmd := &cobra.Command{
		Use:                   "quota NAME [--hard=key1=value1,key2=value2] [--scopes=Scope1,Scope2] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"resourcequota"},
		Short:                 "Create a quota with the specified name",
		Long:                  "Create a resource quota with the specified name, hard limits, and optional scopes.",
		Example: `  # Create a new resource quota named my-quota
  kubectl-lite create quota my-quota --hard=cpu=1,memory=1G,pods=2,services=3,replicationcontrollers=2,resourcequotas=1,secrets=5,persistentvolumeclaims=10

  # Create a new resource quota named best-effort
  kubectl-lite create quota best-effort --hard=pods=100 --scopes=BestEffort`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			q := corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0]}}
			if hard != "" {
				q.Spec.Hard = corev1.ResourceList{}
				for _, st := range strings.Split(hard, ",") {
					parts := strings.Split(st, "=")
					if len(parts) != 2 {
						return fmt.Errorf("Invalid argument syntax %v, expected <resource>=<value>", st)
					}
					v, err := resource.ParseQuantity(parts[1])
					if err != nil {
						return err
					}
					q.Spec.Hard[corev1.ResourceName(parts[0])] = v
				}
			}
			if scope != "" {
				for _, s := range strings.Split(scope, ",") {
					if s == "" {
						return fmt.Errorf("invalid resource quota scope \"\"")
					}
					q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(s))
				}
			}
			obj, err := asMap(q)
			if err != nil {
				return err
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&hard, "hard", "", "A comma-delimited set of resource=quantity pairs that define a hard limit.")
	cmd.Flags().StringVar(&scope, "scopes", "", "A comma-delimited set of quota scopes that must all match each object tracked by the quota.")
	return cmd
}

func newCreatePriorityClass(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen           = write.Generator{Failed: "failed to create priorityclass: "}
		value         int32
		globalDefault bool
		description   string
		preemption    string
	)
	cmd := &cobra.Command{
		Use:                   "priorityclass NAME --value=VALUE --global-default=BOOL [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"pc"},
		Short:                 "Create a priority class with the specified name",
		Long:                  "Create a priority class with the specified name, value, globalDefault and description.",
		Example: `  # Create a priority class named high-priority
  kubectl-lite create priorityclass high-priority --value=1000 --description="high priority"

  # Create a priority class named high-priority that cannot preempt pods with lower priority
  kubectl-lite create priorityclass high-priority --value=1000 --description="high priority" --preemption-policy="Never"`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			policy := corev1.PreemptionPolicy(preemption)
			obj, err := asMap(schedulingv1.PriorityClass{
				TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0]},
				Value:      value, GlobalDefault: globalDefault, Description: description, PreemptionPolicy: &policy,
			})
			if err != nil {
				return err
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().Int32Var(&value, "value", 0, "the value of this priority class.")
	cmd.Flags().BoolVar(&globalDefault, "global-default", false, "global-default specifies whether this PriorityClass should be considered as the default priority.")
	cmd.Flags().StringVar(&description, "description", "", "description is an arbitrary string that usually provides guidelines on when this priority class should be used.")
	cmd.Flags().StringVar(&preemption, "preemption-policy", "PreemptLowerPriority", "preemption-policy is the policy for preempting pods with lower priority.")
	return cmd
}

func newCreatePodDisruptionBudget(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen                                    = write.Generator{Failed: "failed to create poddisruptionbudgets: "}
		minAvailable, maxUnavailable, selector string
	)
	cmd := &cobra.Command{
		Use:                   "poddisruptionbudget NAME --selector=SELECTOR --min-available=N [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"pdb"},
		Short:                 "Create a pod disruption budget with the specified name",
		Long:                  "Create a pod disruption budget with the specified name, selector, and desired minimum available pods.",
		Example: `  # Create a pod disruption budget named my-pdb that will select all pods with the app=rails label
  # and require at least one of them being available at any point in time
  kubectl-lite create poddisruptionbudget my-pdb --selector=app=rails --min-available=1

  # Create a pod disruption budget named my-pdb that will select all pods with the app=nginx label
  # and require at least half of the pods selected to be available at any point in time
  kubectl-lite create pdb my-pdb --selector=app=nginx --min-available=50%`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gen.DryRun.Validate(); err != nil {
				return err
			}
			switch {
			case selector == "":
				return fmt.Errorf("a selector must be specified")
			case maxUnavailable == "" && minAvailable == "":
				return fmt.Errorf("one of min-available or max-unavailable must be specified")
			case maxUnavailable != "" && minAvailable != "":
				return fmt.Errorf("min-available and max-unavailable cannot be both specified")
			}
			re := regexp.MustCompile(`^[0-9]+%?$`)
			switch {
			case minAvailable != "" && !re.MatchString(minAvailable):
				return fmt.Errorf("invalid format specified for min-available")
			case maxUnavailable != "" && !re.MatchString(maxUnavailable):
				return fmt.Errorf("invalid format specified for max-unavailable")
			}
			pdb := policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0]}}
			sel, err := metav1.ParseToLabelSelector(selector)
			if err != nil {
				return err
			}
			pdb.Spec.Selector = sel
			if minAvailable != "" {
				v := intstr.Parse(minAvailable)
				pdb.Spec.MinAvailable = &v
			} else {
				v := intstr.Parse(maxUnavailable)
				pdb.Spec.MaxUnavailable = &v
			}
			obj, err := asMap(pdb)
			if err != nil {
				return err
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&minAvailable, "min-available", "", "The minimum number or percentage of available pods this budget requires.")
	cmd.Flags().StringVar(&maxUnavailable, "max-unavailable", "", "The maximum number or percentage of unavailable pods this budget requires.")
	cmd.Flags().StringVar(&selector, "selector", "", "A label selector to use for this budget. Only equality-based selector requirements are supported.")
	return cmd
}
