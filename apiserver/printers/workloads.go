package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/minik8s/minik8s/api"
)

// The wide columns of the kinds with a pod template.
var (
	containersColumn = col("Containers", "string", "Names of each container in the template.")
	imagesColumn     = col("Images", "string", "Images referenced by each container in the template.")
)

var deploymentPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Ready", "string", "Number of the pod with ready state"),
	col("Up-to-date", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]),
	col("Available", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]),
	ageColumn,
}, wide(containersColumn, imagesColumn, col("Selector", "string", appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]))...),
	deploymentRow)

var replicaSetPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Desired", "integer", appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]),
	col("Current", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]),
	col("Ready", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]),
	ageColumn,
}, wide(containersColumn, imagesColumn, col("Selector", "string", appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]))...),
	replicaSetRow)

var jobPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Status", "string", "Status of the job."),
	col("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
	col("Duration", "string", "Time required to complete the job."),
	ageColumn,
}, wide(containersColumn, imagesColumn, col("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]))...),
	jobRow)

// The scale subresource of deployments and replica sets; its name
// column is not the format "name" kubectl prefixes with a kind.
var scalePrinter = printer([]api.TableColumnDefinition{
	{Name: "Name", Type: "string", Description: metaDoc["name"]},
	col("Desired", "integer", autoscalingv1.ScaleSpec{}.SwaggerDoc()["replicas"]),
	col("Available", "integer", autoscalingv1.ScaleStatus{}.SwaggerDoc()["replicas"]),
	ageColumn,
}, func(s *api.Scale, now time.Time) api.TableRow {
	return cells(s.Name, int64(s.Spec.Replicas), int64(s.Status.Replicas), age(&s.ObjectMeta, now))
})

// replicas is a spec's replica count: 1 when unset, as defaulting makes it.
func replicas(n *int32) int64 {
	if n == nil {
		return 1
	}
	return int64(*n)
}

func deploymentRow(d *api.Deployment, now time.Time) api.TableRow {
	// Unlike the others, a Deployment's SELECTOR is the selector's string
	// as is: "" for an empty one.
	sel := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(labelSelector(d.Spec.Selector)); err == nil {
		sel = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return cells(d.Name, fmt.Sprintf("%d/%d", int64(d.Status.ReadyReplicas), replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(&d.ObjectMeta, now),
		names, images, sel)
}

func replicaSetRow(rs *api.ReplicaSet, now time.Time) api.TableRow {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return cells(rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		age(&rs.ObjectMeta, now), names, images, metav1.FormatLabelSelector(labelSelector(rs.Spec.Selector)))
}

// jobRow is kube's printJob: the first true condition of Complete, Failed,
// (deletion) Terminating, Suspended, FailureTarget, SuccessCriteriaMet,
// else Running; the
// completions out of spec.completions (or "of N" parallel pods); the time
// from start to completion, or to now while running.
func jobRow(j *api.Job, now time.Time) api.TableRow {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var took string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		took = duration.HumanDuration(now.Sub(j.Status.StartTime.Time))
	default:
		took = duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}
	status := "Running"
	switch {
	case jobCondition(j, api.JobComplete):
		status = "Complete"
	case jobCondition(j, api.JobFailed):
		status = "Failed"
	case j.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(j, api.JobSuspended):
		status = "Suspended"
	case jobCondition(j, api.JobFailureTarget):
		status = "FailureTarget"
	case jobCondition(j, api.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return cells(j.Name, status, completions, took, age(&j.ObjectMeta, now),
		names, images, metav1.FormatLabelSelector(labelSelector(j.Spec.Selector)))
}

// jobCondition is kube's hasJobCondition: the first condition of the type
// decides.
func jobCondition(j *api.Job, typ api.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// containerCells are the CONTAINERS and IMAGES cells: names and images
// joined by commas.
func containerCells(cs []api.Container) (names, images string) {
	n := make([]string, len(cs))
	im := make([]string, len(cs))
	for i, c := range cs {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// labelSelector is sel as apimachinery's type, whose String is the
// selector syntax kube prints ("app=web,tier in (a,b)").
func labelSelector(sel *api.LabelSelector) *metav1.LabelSelector {
	if sel == nil {
		return nil
	}
	out := &metav1.LabelSelector{MatchLabels: sel.MatchLabels}
	for _, r := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	return out
}
