package create

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// newCreateJob is kubectl's "create job": a Job running --image (with the
// command after --), or a manual run of a CronJob's job template
// (--from=cronjob/NAME), owned by that CronJob and annotated
// cronjob.kubernetes.io/instantiate=manual.
func newCreateJob(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen   = write.Generator{Failed: "failed to create job: "}
		image string
		from  string
	)
	cmd := &cobra.Command{
		Use:   "job NAME --image=image [--from=cronjob/name] -- [COMMAND] [args...]",
		Short: "Create a job with the specified name",
		Long:  "Create a job with the specified name.",
		Example: `  # Create a job
  kubectl-lite create job my-job --image=busybox

  # Create a job with a command
  kubectl-lite create job my-job --image=busybox -- date

  # Create a job from a cron job named "a-cronjob"
  kubectl-lite create job test-job --from=cronjob/a-cronjob`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, command := args[0], args[1:]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash != 1 {
				return fmt.Errorf("exactly one NAME is required, got %d", dash)
			}
			switch {
			case image == "" && from == "":
				return fmt.Errorf("either --image or --from must be specified")
			case image != "" && from != "":
				return fmt.Errorf("--image and --from are mutually exclusive")
			case from != "" && len(command) > 0:
				return fmt.Errorf("cannot specify --from and command")
			}
			if image != "" {
				c := map[string]any{"name": name, "image": image, "resources": map[string]any{}}
				if len(command) > 0 {
					c["command"] = command
				}
				return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "batch/v1", "kind": "Job",
					"metadata": map[string]any{"name": name},
					"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{},
						"spec": map[string]any{"containers": []any{c}, "restartPolicy": "Never"}}},
					"status": map[string]any{}})
			}
			kind, cjName, ok := strings.Cut(from, "/")
			if !ok || cjName == "" || (kind != "cronjob" && kind != "cronjobs" && kind != "cj" && kind != "cronjob.batch" && kind != "cronjobs.batch") {
				return fmt.Errorf("from must be an existing cronjob")
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			cj, err := client.Resource[api.CronJob](c).Namespace(ns).Get(cmd.Context(), cjName)
			if err != nil {
				return fmt.Errorf("failed to retrieve cronjob %s: %w", cjName, err)
			}
			obj, err := jobFromCronJob(cj, name)
			if err != nil {
				return err
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	cmd.Flags().StringVar(&from, "from", "", "The name of the resource to create a Job from (only cronjob is supported).")
	return cmd
}

// jobFromCronJob is kubectl's manual instantiation of cj's job template.
func jobFromCronJob(cj *api.CronJob, name string) (map[string]any, error) {
	ann := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		ann[k] = v
	}
	yes := true
	job := api.Job{TypeMeta: api.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: api.ObjectMeta{Name: name, Annotations: ann, Labels: cj.Spec.JobTemplate.Labels,
			OwnerReferences: []api.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: &yes}}},
		Spec: cj.Spec.JobTemplate.Spec}
	data, err := json.Marshal(&job)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	return obj, json.Unmarshal(data, &obj)
}

// newCreateCronJob is kubectl's "create cronjob".
func newCreateCronJob(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen      = write.Generator{Failed: "failed to create cronjob: "}
		image    string
		schedule string
		restart  string
	)
	cmd := &cobra.Command{
		Use:     "cronjob NAME --image=image --schedule='0/5 * * * ?' -- [COMMAND] [args...]",
		Aliases: []string{"cj"},
		Short:   "Create a cron job with the specified name",
		Long:    "Create a cron job with the specified name.",
		Example: `  # Create a cron job
  kubectl-lite create cronjob my-job --image=busybox --schedule="*/1 * * * *"

  # Create a cron job with a command
  kubectl-lite create cronjob my-job --image=busybox --schedule="*/1 * * * *" -- date`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, command := args[0], args[1:]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash != 1 {
				return fmt.Errorf("exactly one NAME is required, got %d", dash)
			}
			if image == "" {
				return fmt.Errorf("required flag(s) \"image\" not set")
			}
			if schedule == "" {
				return fmt.Errorf("required flag(s) \"schedule\" not set")
			}
			switch restart {
			case "OnFailure", "Never":
			default:
				return fmt.Errorf("invalid restart value %s", restart)
			}
			c := map[string]any{"name": name, "image": image, "resources": map[string]any{}}
			if len(command) > 0 {
				c["command"] = command
			}
			return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
				"metadata": map[string]any{"name": name},
				"spec": map[string]any{"schedule": schedule,
					"jobTemplate": map[string]any{"metadata": map[string]any{"name": name},
						"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{},
							"spec": map[string]any{"containers": []any{c}, "restartPolicy": restart}}}}},
				"status": map[string]any{}})
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	cmd.Flags().StringVar(&schedule, "schedule", "", "A schedule in the Cron format the job should be run with.")
	cmd.Flags().StringVar(&restart, "restart", "OnFailure", "job's restart policy. supported values: OnFailure, Never")
	return cmd
}
