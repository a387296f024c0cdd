package describers

import (
	"fmt"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// describeJob is kubectl's JobDescriber: the spec's knobs that are set,
// the run's times and pod counts, the completed indexes of an Indexed job,
// the pod template and the events.
func describeJob(w *prefixWriter, j *api.Job, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", j.Name)
	w.write(level0, "Namespace:\t%s\n", j.Namespace)
	w.write(level0, "Selector:\t%s\n", selectorText(j.Spec.Selector))
	w.labels("Labels", j.Labels)
	w.annotations("Annotations", j.Annotations)
	if c := controller(&j.ObjectMeta); c != "" {
		w.write(level0, "Controlled By:\t%s\n", c)
	}
	if j.Spec.Parallelism != nil {
		w.write(level0, "Parallelism:\t%d\n", *j.Spec.Parallelism)
	}
	w.write(level0, "Completions:\t%s\n", int32OrUnset(j.Spec.Completions))
	if j.Spec.CompletionMode != nil {
		w.write(level0, "Completion Mode:\t%s\n", *j.Spec.CompletionMode)
	}
	if j.Spec.Suspend != nil {
		w.write(level0, "Suspend:\t%v\n", *j.Spec.Suspend)
	}
	if j.Spec.BackoffLimit != nil {
		w.write(level0, "Backoff Limit:\t%v\n", *j.Spec.BackoffLimit)
	}
	if j.Spec.TTLSecondsAfterFinished != nil {
		w.write(level0, "TTL Seconds After Finished:\t%v\n", *j.Spec.TTLSecondsAfterFinished)
	}
	st := j.Status
	if st.StartTime != nil {
		w.write(level0, "Start Time:\t%s\n", st.StartTime.Format(time.RFC1123Z))
	}
	if st.CompletionTime != nil {
		w.write(level0, "Completed At:\t%s\n", st.CompletionTime.Format(time.RFC1123Z))
	}
	if st.StartTime != nil && st.CompletionTime != nil {
		w.write(level0, "Duration:\t%s\n", printers.HumanDuration(st.CompletionTime.Sub(st.StartTime.Time)))
	}
	if j.Spec.ActiveDeadlineSeconds != nil {
		w.write(level0, "Active Deadline Seconds:\t%ds\n", *j.Spec.ActiveDeadlineSeconds)
	}
	if st.Ready == nil {
		w.write(level0, "Pods Statuses:\t%d Active / %d Succeeded / %d Failed\n", st.Active, st.Succeeded, st.Failed)
	} else {
		w.write(level0, "Pods Statuses:\t%d Active (%d Ready) / %d Succeeded / %d Failed\n", st.Active, *st.Ready, st.Succeeded, st.Failed)
	}
	if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == api.IndexedCompletion {
		w.write(level0, "Completed Indexes:\t%s\n", capIndexes(st.CompletedIndexes, 50))
	}
	podTemplate(w, &j.Spec.Template)
	w.events(evs, now)
}

// capIndexes shortens an index list to the first entry that ends past
// softLimit characters, as kubectl's capIndexesListOrNone.
func capIndexes(indexes string, softLimit int) string {
	if indexes == "" {
		return "<none>"
	}
	i := softLimit
	for i < len(indexes) && indexes[i] != ',' {
		i++
	}
	if i >= len(indexes) {
		return indexes
	}
	return indexes[:i+1] + "..."
}

// describeCronJob is kubectl's CronJobDescriber.
func describeCronJob(w *prefixWriter, cj *api.CronJob, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", cj.Name)
	w.write(level0, "Namespace:\t%s\n", cj.Namespace)
	w.labels("Labels", cj.Labels)
	w.annotations("Annotations", cj.Annotations)
	w.write(level0, "Schedule:\t%s\n", cj.Spec.Schedule)
	w.write(level0, "Concurrency Policy:\t%s\n", cj.Spec.ConcurrencyPolicy)
	suspend := "<unset>"
	if cj.Spec.Suspend != nil {
		suspend = boolString(*cj.Spec.Suspend)
	}
	w.write(level0, "Suspend:\t%s\n", suspend)
	tz := "<unset>"
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	w.write(level0, "Time Zone:\t%s\n", tz)
	w.write(level0, "Successful Job History Limit:\t%s\n", int32OrUnset(cj.Spec.SuccessfulJobsHistoryLimit))
	w.write(level0, "Failed Job History Limit:\t%s\n", int32OrUnset(cj.Spec.FailedJobsHistoryLimit))
	if cj.Spec.StartingDeadlineSeconds != nil {
		w.write(level0, "Starting Deadline Seconds:\t%ds\n", *cj.Spec.StartingDeadlineSeconds)
	} else {
		w.write(level0, "Starting Deadline Seconds:\t<unset>\n")
	}
	jt := cj.Spec.JobTemplate.Spec
	if jt.Selector != nil {
		w.write(level0, "Selector:\t%s\n", selectorText(jt.Selector))
	} else {
		w.write(level0, "Selector:\t<unset>\n")
	}
	w.write(level0, "Parallelism:\t%s\n", int32OrUnset(jt.Parallelism))
	w.write(level0, "Completions:\t%s\n", int32OrUnset(jt.Completions))
	if jt.ActiveDeadlineSeconds != nil {
		w.write(level0, "Active Deadline Seconds:\t%ds\n", *jt.ActiveDeadlineSeconds)
	}
	podTemplate(w, &jt.Template)
	if t := cj.Status.LastScheduleTime; t != nil {
		w.write(level0, "Last Schedule Time:\t%s\n", t.Format(time.RFC1123Z))
	} else {
		w.write(level0, "Last Schedule Time:\t<unset>\n")
	}
	w.write(level0, "Active Jobs:\t")
	if len(cj.Status.Active) == 0 {
		w.write(level0, "<none>\n")
	} else {
		for i, j := range cj.Status.Active {
			if i > 0 {
				w.write(level0, ", ")
			}
			w.write(level0, "%s", j.Name)
		}
		w.write(level0, "\n")
	}
	w.events(evs, now)
}

func int32OrUnset(v *int32) string {
	if v == nil {
		return "<unset>"
	}
	return fmt.Sprintf("%d", *v)
}

// selectorText is a label selector as kubectl's LabelSelectorAsSelector
// prints it: "" for none, the error when it is malformed.
func selectorText(s *api.LabelSelector) string {
	sel, err := labels.SelectorFromLabelSelector(s)
	if err != nil {
		return "Failed to get selector: " + err.Error()
	}
	return sel.String()
}
