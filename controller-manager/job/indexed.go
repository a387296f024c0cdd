package job

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
)

// An Indexed job runs one pod per completion index 0..completions-1; the
// index travels in the pod's batch.kubernetes.io/job-completion-index
// annotation and label, its JOB_COMPLETION_INDEX environment variable, its
// name NAME-INDEX-xxxxx and hostname NAME-INDEX, and the succeeded indexes
// in status.completedIndexes ("1,3-5"). With backoffLimitPerIndex each
// index has its own failure budget: an index whose pod fails with
// backoffLimitPerIndex failures before it (or by a FailIndex rule) is
// failed for good, in status.failedIndexes; more than maxFailedIndexes of
// them fail the job at once, and any fail it once every index is done.
// An index's failures so far travel in its pods' annotations: the failed
// pod with the most of them keeps its tracking finalizer (and so cannot
// vanish) until the index's next pod, which carries them on, exists.

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

// trackedTemplate is the job's pod template with the tracking finalizer.
func trackedTemplate(t *api.PodTemplateSpec) *api.PodTemplateSpec {
	t = api.DeepCopy(t)
	if !slices.Contains(t.Finalizers, api.JobTrackingFinalizer) {
		t.Finalizers = append(t.Finalizers, api.JobTrackingFinalizer)
	}
	return t
}

// indexedTemplate is the pod template for index i, from base: the index
// in an annotation, a label and JOB_COMPLETION_INDEX, the hostname
// JOB-INDEX and the name JOB-INDEX-xxxxx as kube gives them, and with
// backoffLimitPerIndex the failures of the index so far.
func indexedTemplate(job *api.Job, base *api.PodTemplateSpec, i int, failures indexFailures) *api.PodTemplateSpec {
	t := api.DeepCopy(base)
	v := strconv.Itoa(i)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[api.JobCompletionIndexAnnotation] = v
	if job.Spec.BackoffLimitPerIndex != nil {
		t.Annotations[api.JobIndexFailureCountAnnotation] = strconv.Itoa(int(failures.counted))
		if failures.ignored > 0 {
			t.Annotations[api.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(failures.ignored))
		}
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[api.JobCompletionIndexAnnotation] = v
	t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, i)
	t.GenerateName = indexedGenerateName(job.Name, i)
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

// indexedGenerateName is kube's "JOB-INDEX-", the job's name cut so that
// the index and the random suffix always fit.
func indexedGenerateName(job string, i int) string {
	suffix := "-" + strconv.Itoa(i) + "-"
	prefix := job + suffix
	if len(prefix) > controller.MaxGeneratedNameLength {
		prefix = prefix[:controller.MaxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}

// indexFailures are the failures of one index before its next pod: those
// counted against backoffLimitPerIndex and those the pod failure policy
// ignored.
type indexFailures struct{ counted, ignored int32 }

// nextIndexFailures is kube's getNewIndexFailureCounts: the counts of the
// failed pod being replaced, plus its own failure; none for an index
// without one.
func nextIndexFailures(job *api.Job, replaced *api.Pod) indexFailures {
	if replaced == nil {
		return indexFailures{}
	}
	f := indexFailures{counted: indexFailureCount(replaced), ignored: annotationInt(replaced, api.JobIndexIgnoredFailureCountAnnotation)}
	if action, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, replaced); action == api.PodFailurePolicyActionIgnore {
		f.ignored++
	} else {
		f.counted++
	}
	return f
}

// absoluteIndexFailures is how many earlier pods of p's index failed,
// ignored failures included (kube's getIndexAbsoluteFailureCount).
func absoluteIndexFailures(p *api.Pod) int32 {
	return indexFailureCount(p) + annotationInt(p, api.JobIndexIgnoredFailureCountAnnotation)
}

// indexFailureCount is how many earlier pods of p's index failed.
func indexFailureCount(p *api.Pod) int32 {
	return annotationInt(p, api.JobIndexFailureCountAnnotation)
}

func annotationInt(p *api.Pod, key string) int32 {
	n, err := strconv.Atoi(p.Annotations[key])
	if err != nil || n < 0 {
		return 0
	}
	return int32(min(n, math.MaxInt32))
}
