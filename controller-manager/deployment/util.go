package deployment

import (
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
)

// maxRevHistoryLengthInChars bounds the revision-history annotation.
const maxRevHistoryLengthInChars = 2000

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func dReplicas(d *api.Deployment) int32   { return replicasOf(d.Spec.Replicas) }
func rsReplicas(rs *api.ReplicaSet) int32 { return replicasOf(rs.Spec.Replicas) }

// valueFromIntOrPercent resolves an int or "N%" of total, rounding a
// percentage up or down.
func valueFromIntOrPercent(v *api.IntOrString, total int, roundUp bool) (int, error) {
	return controller.ScaledValueFromIntOrPercent(v, total, roundUp)
}

// ResolveFenceposts resolves maxSurge (rounded up) and maxUnavailable
// (rounded down) against desired; if both come out 0, maxUnavailable is 1.
func ResolveFenceposts(maxSurge, maxUnavailable *api.IntOrString, desired int32) (int32, int32, error) {
	surge, err := valueFromIntOrPercent(maxSurge, int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := valueFromIntOrPercent(maxUnavailable, int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

func isRollingUpdate(d *api.Deployment) bool {
	return d.Spec.Strategy.Type == api.RollingUpdateDeploymentStrategyType
}

func rollingParams(d *api.Deployment) (surge, unavailable *api.IntOrString) {
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		return ru.MaxSurge, ru.MaxUnavailable
	}
	s, u := api.FromString("25%"), api.FromString("25%")
	return &s, &u
}

// MaxSurge is how many pods above spec.replicas a rolling update may run.
func MaxSurge(d *api.Deployment) int32 {
	if !isRollingUpdate(d) {
		return 0
	}
	s, u := rollingParams(d)
	surge, _, _ := ResolveFenceposts(s, u, dReplicas(d))
	return surge
}

// MaxUnavailable is how many of spec.replicas may be unavailable during a
// rolling update.
func MaxUnavailable(d *api.Deployment) int32 {
	if !isRollingUpdate(d) || dReplicas(d) == 0 {
		return 0
	}
	s, u := rollingParams(d)
	_, unavailable, _ := ResolveFenceposts(s, u, dReplicas(d))
	return min(unavailable, dReplicas(d))
}

// Conditions.

func newCondition(t api.DeploymentConditionType, status api.ConditionStatus, reason, message string, now time.Time) api.DeploymentCondition {
	return api.DeploymentCondition{Type: t, Status: status, LastUpdateTime: api.NewTime(now),
		LastTransitionTime: api.NewTime(now), Reason: reason, Message: message}
}

func getCondition(st api.DeploymentStatus, t api.DeploymentConditionType) *api.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			c := st.Conditions[i]
			return &c
		}
	}
	return nil
}

// setCondition adds or replaces a condition; one with the same status and
// reason is left as is, and lastTransitionTime survives a same-status change.
func setCondition(st *api.DeploymentStatus, c api.DeploymentCondition) {
	cur := getCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	st.Conditions = append(filterOutCondition(st.Conditions, c.Type), c)
}

func removeCondition(st *api.DeploymentStatus, t api.DeploymentConditionType) {
	st.Conditions = filterOutCondition(st.Conditions, t)
}

func filterOutCondition(cs []api.DeploymentCondition, t api.DeploymentConditionType) []api.DeploymentCondition {
	var out []api.DeploymentCondition
	for _, c := range cs {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// Revisions and annotations.

func revision(meta *api.ObjectMeta) (int64, error) {
	v, ok := meta.Annotations[api.RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

func maxRevision(rss []*api.ReplicaSet, log *slog.Logger) int64 {
	var m int64
	for _, rs := range rss {
		v, err := revision(&rs.ObjectMeta)
		if err != nil {
			log.Debug("cannot parse revision of replica set", "replicaset", rs.Name, "err", err)
			continue
		}
		m = max(m, v)
	}
	return m
}

// setDeploymentRevision sets the deployment's revision annotation.
func setDeploymentRevision(d *api.Deployment, rev string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[api.RevisionAnnotation] == rev {
		return false
	}
	d.Annotations[api.RevisionAnnotation] = rev
	return true
}

// setNewReplicaSetAnnotations copies the deployment's annotations to the
// new ReplicaSet, raises its revision to newRevision (keeping the earlier
// ones in revision-history when it is an old template rolled back to), and
// for a ReplicaSet about to be created sets desired- and max-replicas.
func setNewReplicaSetAnnotations(d *api.Deployment, rs *api.ReplicaSet, newRevision string, exists bool) bool {
	changed := copyDeploymentAnnotations(d, rs)
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	oldRevision, had := rs.Annotations[api.RevisionAnnotation]
	oldRev, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldRev = 0
	}
	newRev, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldRev < newRev {
		rs.Annotations[api.RevisionAnnotation] = newRevision
		changed = true
		if had {
			history := rs.Annotations[api.RevisionHistoryAnnotation]
			if history == "" {
				rs.Annotations[api.RevisionHistoryAnnotation] = oldRevision
			} else {
				old := strings.Split(history, ",")
				total := len(history) + len(oldRevision) + 1
				start := 0
				for total > maxRevHistoryLengthInChars && start < len(old) {
					total -= len(old[start]) + 1
					start++
				}
				if total <= maxRevHistoryLengthInChars {
					rs.Annotations[api.RevisionHistoryAnnotation] = strings.Join(append(old[start:], oldRevision), ",")
				}
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, dReplicas(d), dReplicas(d)+MaxSurge(d)) {
		changed = true
	}
	return changed
}

func copyDeploymentAnnotations(d *api.Deployment, rs *api.ReplicaSet) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range d.Annotations {
		if api.SkipCopyAnnotation(k) || rs.Annotations[k] == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

func setReplicasAnnotations(rs *api.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range map[string]string{api.DesiredReplicasAnnotation: strconv.Itoa(int(desired)), api.MaxReplicasAnnotation: strconv.Itoa(int(maxReplicas))} {
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *api.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[api.DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[api.MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

func intAnnotation(rs *api.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// Templates and ReplicaSet sets.

// findNewReplicaSet returns the oldest ReplicaSet whose template is the
// deployment's.
func findNewReplicaSet(d *api.Deployment, rss []*api.ReplicaSet) *api.ReplicaSet {
	sorted := append([]*api.ReplicaSet(nil), rss...)
	sort.Sort(byCreationTimestamp(sorted))
	for _, rs := range sorted {
		if api.EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// findOldReplicaSets returns every ReplicaSet but the new one.
func findOldReplicaSets(d *api.Deployment, rss []*api.ReplicaSet) []*api.ReplicaSet {
	newRS := findNewReplicaSet(d, rss)
	var out []*api.ReplicaSet
	for _, rs := range rss {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		out = append(out, rs)
	}
	return out
}

func filterActive(rss []*api.ReplicaSet) []*api.ReplicaSet {
	var out []*api.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func sumReplicas(rss []*api.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rsReplicas(rs)
		}
	}
	return n
}

func sumStatus(rss []*api.ReplicaSet, f func(api.ReplicaSetStatus) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs.Status)
		}
	}
	return n
}

func actualReplicas(s api.ReplicaSetStatus) int32    { return s.Replicas }
func readyReplicas(s api.ReplicaSetStatus) int32     { return s.ReadyReplicas }
func availableReplicas(s api.ReplicaSetStatus) int32 { return s.AvailableReplicas }

// newRSNewReplicas is the size the new ReplicaSet should grow to now.
func newRSNewReplicas(d *api.Deployment, all []*api.ReplicaSet, newRS *api.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case api.RollingUpdateDeploymentStrategyType:
		s, _ := rollingParams(d)
		surge, err := valueFromIntOrPercent(s, int(dReplicas(d)), true)
		if err != nil {
			return 0, err
		}
		current := sumReplicas(all)
		maxTotal := dReplicas(d) + int32(surge)
		if current >= maxTotal {
			return rsReplicas(newRS), nil
		}
		up := min(maxTotal-current, dReplicas(d)-rsReplicas(newRS))
		return rsReplicas(newRS) + up, nil
	case api.RecreateDeploymentStrategyType:
		return dReplicas(d), nil
	}
	return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
}

// isSaturated: the new ReplicaSet owns all desired replicas, all available.
func isSaturated(d *api.Deployment, rs *api.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, api.DesiredReplicasAnnotation)
	return ok && rsReplicas(rs) == dReplicas(d) && desired == dReplicas(d) && rs.Status.AvailableReplicas == dReplicas(d)
}

// getProportion is rs's share of a scaling of the whole deployment by
// toAdd, of which added is handed out already.
func getProportion(rs *api.ReplicaSet, d *api.Deployment, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func replicaSetFraction(rs *api.ReplicaSet, d *api.Deployment) int32 {
	if dReplicas(d) == 0 {
		return -rsReplicas(rs)
	}
	deploymentReplicas := dReplicas(d) + MaxSurge(d)
	annotated, ok := intAnnotation(rs, api.MaxReplicasAnnotation)
	if !ok || annotated == 0 {
		annotated = d.Status.Replicas
	}
	if annotated == 0 {
		return 0
	}
	size := float64(rsReplicas(rs)*deploymentReplicas) / float64(annotated)
	return int32(math.Round(size)) - rsReplicas(rs)
}

// deploymentComplete: every desired replica updated and available, no old
// ones, and the latest generation observed.
func deploymentComplete(d *api.Deployment, st *api.DeploymentStatus) bool {
	r := dReplicas(d)
	return st.UpdatedReplicas == r && st.Replicas == r && st.AvailableReplicas == r && st.ObservedGeneration >= d.Generation
}

// deploymentProgressing: more updated, ready or available pods, or fewer
// old ones, than the recorded status.
func deploymentProgressing(d *api.Deployment, st *api.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

func hasProgressDeadline(d *api.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func hasRevisionHistoryLimit(d *api.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// deploymentTimedOut: the Progressing condition was last updated more
// than progressDeadlineSeconds ago (or says so already).
func deploymentTimedOut(d *api.Deployment, st *api.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getCondition(*st, api.DeploymentProgressing)
	if c == nil || c.Reason == api.NewRSAvailableReason {
		return false
	}
	if c.Reason == api.TimedOutReason {
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

// Orderings.

type byCreationTimestamp []*api.ReplicaSet

func (s byCreationTimestamp) Len() int      { return len(s) }
func (s byCreationTimestamp) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s byCreationTimestamp) Less(i, j int) bool {
	if s[i].CreationTimestamp.Equal(s[j].CreationTimestamp.Time) {
		return s[i].Name < s[j].Name
	}
	return s[i].CreationTimestamp.Before(s[j].CreationTimestamp.Time)
}

// bySizeOlder: larger first, then older first.
type bySizeOlder []*api.ReplicaSet

func (s bySizeOlder) Len() int      { return len(s) }
func (s bySizeOlder) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s bySizeOlder) Less(i, j int) bool {
	if rsReplicas(s[i]) == rsReplicas(s[j]) {
		return byCreationTimestamp(s).Less(i, j)
	}
	return rsReplicas(s[i]) > rsReplicas(s[j])
}

// bySizeNewer: larger first, then newer first.
type bySizeNewer []*api.ReplicaSet

func (s bySizeNewer) Len() int      { return len(s) }
func (s bySizeNewer) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s bySizeNewer) Less(i, j int) bool {
	if rsReplicas(s[i]) == rsReplicas(s[j]) {
		return byCreationTimestamp(s).Less(j, i)
	}
	return rsReplicas(s[i]) > rsReplicas(s[j])
}

// byRevision: lower revision first, then older first.
type byRevision []*api.ReplicaSet

func (s byRevision) Len() int      { return len(s) }
func (s byRevision) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s byRevision) Less(i, j int) bool {
	ri, err1 := revision(&s[i].ObjectMeta)
	rj, err2 := revision(&s[j].ObjectMeta)
	if err1 != nil || err2 != nil || ri == rj {
		return byCreationTimestamp(s).Less(i, j)
	}
	return ri < rj
}
