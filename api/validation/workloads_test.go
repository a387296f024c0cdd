package validation

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestValidateDeployment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*api.Deployment)
		want   []string
	}{
		{"valid", func(*api.Deployment) {}, nil},
		{"selector missing", func(d *api.Deployment) { d.Spec.Selector = nil }, []string{"spec.selector: Required value",
			"spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"}},
		{"empty selector", func(d *api.Deployment) { d.Spec.Selector = &api.LabelSelector{} }, []string{
			"spec.selector: Invalid value: {}: empty selector is invalid for deployment"}},
		{"selector does not match template", func(d *api.Deployment) {
			d.Spec.Selector.MatchLabels = map[string]string{"app": "api"}
		}, []string{"spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"}},
		{"negative replicas and history", func(d *api.Deployment) {
			d.Spec.Replicas = ptr(int32(-1))
			d.Spec.RevisionHistoryLimit = ptr(int32(-2))
		}, []string{
			"spec.replicas: Invalid value: -1: must be greater than or equal to 0",
			"spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
		}},
		{"both zero", func(d *api.Deployment) {
			d.Spec.Strategy.RollingUpdate = &api.RollingUpdateDeployment{MaxSurge: ptr(api.FromString("0%")), MaxUnavailable: ptr(api.FromInt(0))}
		}, []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"}},
		{"percent over 100 and malformed", func(d *api.Deployment) {
			d.Spec.Strategy.RollingUpdate = &api.RollingUpdateDeployment{MaxSurge: ptr(api.FromString("20Percent")), MaxUnavailable: ptr(api.FromString("110%"))}
		}, []string{
			`spec.strategy.rollingUpdate.maxSurge: Invalid value: 20Percent: a valid percent string must be a numeric string followed by an ending '%' ...`,
			"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 110%: must not be greater than 100%",
		}},
		{"recreate with rollingUpdate", func(d *api.Deployment) { d.Spec.Strategy.Type = api.RecreateDeploymentStrategyType }, []string{
			"spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"}},
		{"unknown strategy", func(d *api.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }, []string{
			`spec.strategy: Unsupported value: api.DeploymentStrategy{...}: supported values: "Recreate", "RollingUpdate"`}},
		{"progress deadline", func(d *api.Deployment) {
			d.Spec.MinReadySeconds = 600
		}, []string{"spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"}},
		{"template restartPolicy", func(d *api.Deployment) { d.Spec.Template.Spec.RestartPolicy = api.RestartPolicyNever }, []string{
			`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`}},
		{"template pod spec errors carry the template path", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "" }, []string{
			"spec.template.spec.containers[0].image: Required value"}},
	}
	for _, tc := range tests {
		d := validDeployment()
		tc.mutate(d)
		checkErrs(t, tc.name, Validate(d), tc.want)
	}
}

func TestValidateDeploymentUpdate(t *testing.T) {
	t.Parallel()
	old := validDeployment()
	old.ResourceVersion = "4"
	d := api.DeepCopy(old)
	d.Spec.Replicas = ptr(int32(5))
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	checkErrs(t, "scale and new image", ValidateUpdate(d, old), nil)

	d = api.DeepCopy(old)
	d.Spec.Selector.MatchLabels["tier"] = "front"
	d.Spec.Template.Labels["tier"] = "front"
	checkErrs(t, "selector changed", ValidateUpdate(d, old), []string{
		"spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"tier\":\"front\"}}: field is immutable"})

	d = api.DeepCopy(old)
	d.Status = api.DeploymentStatus{Replicas: 2, ReadyReplicas: 3, AvailableReplicas: 3, CollisionCount: ptr(int32(1))}
	old.Status.CollisionCount = ptr(int32(2))
	checkErrs(t, "status", ValidateStatusUpdate(d, old), []string{
		"status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
		"status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
		"status.collisionCount: Invalid value: 1: cannot be decremented",
	})
}

func TestValidateReplicaSet(t *testing.T) {
	t.Parallel()
	rs := validReplicaSet()
	checkErrs(t, "valid", Validate(rs), nil)
	rs.Spec.Selector = &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "app", Operator: "NotIn", Values: []string{"web"}}}}
	rs.Spec.MinReadySeconds = -1
	checkErrs(t, "invalid", Validate(rs), []string{
		"spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
		"spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`",
	})
	old := validReplicaSet()
	old.ResourceVersion = "1"
	upd := api.DeepCopy(old)
	upd.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "web", "x": "y"}}
	upd.Spec.Template.Labels["x"] = "y"
	checkErrs(t, "selector immutable", ValidateUpdate(upd, old), []string{"spec.selector: Invalid value: ...: field is immutable"})
	st := api.DeepCopy(old)
	st.Status = api.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}
	checkErrs(t, "status", ValidateStatusUpdate(st, old), []string{
		"status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas"})
}

func TestValidateJob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*api.Job)
		want   []string
	}{
		{"valid", func(*api.Job) {}, nil},
		{"restart Always", func(j *api.Job) { j.Spec.Template.Spec.RestartPolicy = api.RestartPolicyAlways }, []string{
			`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"negative counts", func(j *api.Job) {
			j.Spec.Parallelism = ptr(int32(-1))
			j.Spec.Completions = ptr(int32(-2))
			j.Spec.BackoffLimit = ptr(int32(-3))
		}, []string{
			"spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
			"spec.completions: Invalid value: -2: must be greater than or equal to 0",
			"spec.backoffLimit: Invalid value: -3: must be greater than or equal to 0",
		}},
		{"selector not generated", func(j *api.Job) {
			j.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		}, []string{"spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\"}}: `selector` not auto-generated"}},
		{"generated label changed", func(j *api.Job) {
			j.Spec.Template.Labels["job-name"] = "other"
		}, []string{"spec.template.metadata.labels[job-name]: Invalid value: {...}: must be 'pi'"}},
		{"manual selector must match template", func(j *api.Job) {
			j.Spec.ManualSelector = ptr(true)
			j.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
		}, []string{"spec.template.metadata.labels: Invalid value: {...}: `selector` does not match template `labels`"}},
		{"indexed without completions", func(j *api.Job) {
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			j.Spec.Completions = nil
		}, []string{"spec.completions: Required value: when completion mode is Indexed"}},
		{"unknown completion mode", func(j *api.Job) { j.Spec.CompletionMode = ptr(api.CompletionMode("Sometimes")) }, []string{
			`spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"`}},
		{"success policy on a NonIndexed job", func(j *api.Job) {
			j.Spec.SuccessPolicy = &api.SuccessPolicy{Rules: []api.SuccessPolicyRule{{SucceededCount: ptr(int32(1))}}}
		}, []string{`spec.successPolicy: Invalid value: {"Rules":[{"SucceededIndexes":null,"SucceededCount":1}]}: requires indexed completion mode`}},
		{"success policy rules", func(j *api.Job) {
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			j.Spec.Completions = ptr(int32(5))
			j.Spec.SuccessPolicy = &api.SuccessPolicy{Rules: []api.SuccessPolicyRule{
				{}, {SucceededIndexes: ptr("1,5")}, {SucceededIndexes: ptr("3,1")}, {SucceededIndexes: ptr("0-1-2")},
				{SucceededIndexes: ptr("0,2-3"), SucceededCount: ptr(int32(4))}, {SucceededCount: ptr(int32(6))},
			}}
		}, []string{
			"spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
			`spec.successPolicy.rules[1].succeededIndexes: Invalid value: "1,5": error parsing succeededIndexes: too large index: "5"`,
			`spec.successPolicy.rules[2].succeededIndexes: Invalid value: "3,1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1`,
			`spec.successPolicy.rules[3].succeededIndexes: Invalid value: "0-1-2": error parsing succeededIndexes: the fragment "0-1-2" violates the requirement that an index interval can have at most two parts separated by '-'`,
			"spec.successPolicy.rules[4].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of indexes in the specified succeededIndexes field)",
			"spec.successPolicy.rules[5].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)",
		}},
		{"success policy without rules", func(j *api.Job) {
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			j.Spec.SuccessPolicy = &api.SuccessPolicy{}
		}, []string{"spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified"}},
		{"pod failure policy shape", func(j *api.Job) {
			j.Spec.PodReplacementPolicy = ptr("Failed")
			j.Spec.PodFailurePolicy = &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{
				{Action: "Explode", OnExitCodes: &api.PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{0}}},
				{Action: api.PodFailurePolicyActionIgnore},
			}}
		}, []string{
			`spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore"`,
			"spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
			"spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
		}},
	}
	for _, tc := range tests {
		j := validJob()
		tc.mutate(j)
		checkErrs(t, tc.name, Validate(j), tc.want)
	}
}

func TestValidateJobUpdate(t *testing.T) {
	t.Parallel()
	old := validJob()
	old.ResourceVersion = "9"
	j := api.DeepCopy(old)
	j.Spec.Parallelism = ptr(int32(3))
	j.Spec.Suspend = ptr(true)
	checkErrs(t, "parallelism and suspend may change", ValidateUpdate(j, old), nil)

	j = api.DeepCopy(old)
	j.Spec.Completions = ptr(int32(5))
	j.Spec.Template.Spec.Containers[0].Image = "other"
	checkErrs(t, "immutables", ValidateUpdate(j, old), []string{
		"spec.completions: Invalid value: 5: field is immutable",
		"spec.template: Invalid value: api.PodTemplateSpec{...}: field is immutable",
	})

	j = api.DeepCopy(old)
	j.Status = api.JobStatus{Active: -1, Ready: ptr(int32(-1))}
	checkErrs(t, "status", ValidateStatusUpdate(j, old), []string{
		"status.active: Invalid value: -1: must be greater than or equal to 0",
		"status.ready: Invalid value: -1: must be greater than or equal to 0",
	})
}

func TestValidateScale(t *testing.T) {
	t.Parallel()
	s := &api.Scale{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"}, Spec: api.ScaleSpec{Replicas: -1}}
	checkErrs(t, "scale", Validate(s), []string{"spec.replicas: Invalid value: -1: must be greater than or equal to 0"})
}
