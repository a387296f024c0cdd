package root_test

import (
	"context"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// TestIntegrationCreateJobs covers "create cronjob" (as kubectl prints it
// with --dry-run=client -o yaml), "create job --image -- cmd" and
// "create job --from=cronjob/NAME".
func TestIntegrationCreateJobs(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	out := c.mustRun("", "create", "cronjob", "tick", "--image=busybox", "--schedule=*/1 * * * *", "--dry-run=client", "-o", "yaml", "--", "date")
	want := `apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  jobTemplate:
    metadata:
      name: tick
    spec:
      template:
        metadata: {}
        spec:
          containers:
          - command:
            - date
            image: busybox
            name: tick
            resources: {}
          restartPolicy: OnFailure
  schedule: '*/1 * * * *'
status: {}
`
	if out != want {
		t.Errorf("create cronjob --dry-run=client -o yaml:\n%s\nwant\n%s", out, want)
	}
	if out := c.mustRun("", "create", "cronjob", "tick", "--image=busybox", "--schedule=@hourly", "--", "date"); out != "cronjob.batch/tick created\n" {
		t.Errorf("create cronjob = %q", out)
	}
	c.wantFail(`error: required flag(s) "schedule" not set`, "create", "cronjob", "x", "--image=busybox")
	if out := c.mustRun("", "create", "job", "once", "--image=busybox", "--", "echo", "hi"); out != "job.batch/once created\n" {
		t.Errorf("create job = %q", out)
	}
	jobs := client.Resource[api.Job](c.client).Namespace("default")
	j, err := jobs.Get(ctx, "once")
	if err != nil {
		t.Fatal(err)
	}
	if ctr := j.Spec.Template.Spec.Containers[0]; ctr.Name != "once" || strings.Join(ctr.Command, " ") != "echo hi" || j.Spec.Template.Spec.RestartPolicy != api.RestartPolicyNever {
		t.Errorf("job %+v", j.Spec.Template.Spec)
	}
	if out := c.mustRun("", "create", "job", "manual", "--from=cronjob/tick"); out != "job.batch/manual created\n" {
		t.Errorf("create job --from = %q", out)
	}
	cj, err := client.Resource[api.CronJob](c.client).Namespace("default").Get(ctx, "tick")
	if err != nil {
		t.Fatal(err)
	}
	j, err = jobs.Get(ctx, "manual")
	if err != nil {
		t.Fatal(err)
	}
	if j.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" || len(j.OwnerReferences) != 1 || j.OwnerReferences[0].UID != cj.UID ||
		j.OwnerReferences[0].Kind != "CronJob" || j.Spec.Template.Spec.Containers[0].Command[0] != "date" {
		t.Errorf("job from cronjob: %+v %+v", j.ObjectMeta, j.Spec.Template.Spec)
	}
	c.wantFail("error: from must be an existing cronjob", "create", "job", "x", "--from=deployment/web")
}
