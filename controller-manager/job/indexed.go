package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// An Indexed job runs one pod per completion index 0..completions-1; the
// index travels in the pod's batch.kubernetes.io/job-completion-index
// annotation and label, its JOB_COMPLETION_INDEX environment variable and
// its hostname NAME-INDEX, and the succeeded indexes in
// status.completedIndexes ("1,3-5").

// completionIndexEnv is the environment variable kube gives every
// container of an Indexed job's pod.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// podIndex is the completion index of p, or -1 when it has none valid
// for completions.
func podIndex(p *api.Pod, completions int32) int {
	v, ok := p.Annotations[api.JobCompletionIndexAnnotation]
	if !ok {
		v, ok = p.Labels[api.JobCompletionIndexAnnotation]
	}
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= int(completions) {
		return -1
	}
	return i
}

// parseIndexes reads a completedIndexes string, dropping what does not
// fit completions.
func parseIndexes(s string, completions int32) map[int]bool {
	out := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := max(a, 0); i <= b && i < int(completions); i++ {
			out[i] = true
		}
	}
	return out
}

// formatIndexes writes a set of indexes as kube does: sorted, runs of
// consecutive indexes as "a-b".
func formatIndexes(set map[int]bool) string {
	idx := make([]int, 0, len(set))
	for i := range set {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", idx[i], idx[j])
		} else {
			fmt.Fprintf(&b, "%d", idx[i])
		}
		i = j + 1
	}
	return b.String()
}

// indexedTemplate is the job's pod template for index i.
func indexedTemplate(job *api.Job, i int) *api.PodTemplateSpec {
	t := api.DeepCopy(&job.Spec.Template)
	v := strconv.Itoa(i)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[api.JobCompletionIndexAnnotation] = v
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[api.JobCompletionIndexAnnotation] = v
	if t.Spec.Hostname == "" {
		t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, i)
	}
	env := api.EnvVar{Name: completionIndexEnv, ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{
		APIVersion: "v1", FieldPath: fmt.Sprintf("metadata.annotations['%s']", api.JobCompletionIndexAnnotation)}}}
	add := func(cs []api.Container) {
		for k := range cs {
			if !slices.ContainsFunc(cs[k].Env, func(e api.EnvVar) bool { return e.Name == completionIndexEnv }) {
				cs[k].Env = append(cs[k].Env, env)
			}
		}
	}
	add(t.Spec.InitContainers)
	add(t.Spec.Containers)
	return t
}
