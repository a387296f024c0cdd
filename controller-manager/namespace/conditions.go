package namespace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
)

// The deletion conditions the controller keeps on a Terminating namespace,
// in kube's order, each with the reason and message it has when all is
// well (status False).
var deletionConditions = []struct {
	typ             api.NamespaceConditionType
	reason, message string
}{
	{api.NamespaceDeletionDiscoveryFailure, "ResourcesDiscovered", "All resources successfully discovered"},
	{api.NamespaceDeletionGVParsingFailure, "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{api.NamespaceDeletionContentFailure, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{api.NamespaceContentRemaining, "ContentRemoved", "All content successfully removed"},
	{api.NamespaceFinalizersRemaining, "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// conditionUpdate collects what one pass found wrong, as kube's
// namespaceConditionUpdater: the conditions it raises (status True) and
// the content deletion errors.
type conditionUpdate struct {
	raised       []api.NamespaceCondition
	deleteErrors []string
}

func (u *conditionUpdate) raise(typ api.NamespaceConditionType, reason, message string) {
	u.raised = append(u.raised, api.NamespaceCondition{Type: typ, Status: api.ConditionTrue, Reason: reason, Message: message})
}

func (u *conditionUpdate) discoveryFailed(err error) {
	u.raise(api.NamespaceDeletionDiscoveryFailure, "DiscoveryFailed", err.Error())
}

func (u *conditionUpdate) contentFailed(err error) {
	u.deleteErrors = append(u.deleteErrors, err.Error())
}

// contentTotals raises NamespaceContentRemaining and
// NamespaceFinalizersRemaining for what the pass left.
func (u *conditionUpdate) contentTotals(t contentLeft) {
	if len(t.resources) > 0 {
		var parts []string
		for r, n := range t.resources {
			parts = append(parts, fmt.Sprintf("%s has %d resource instances", r, n))
		}
		sort.Strings(parts)
		u.raise(api.NamespaceContentRemaining, "SomeResourcesRemain", "Some resources are remaining: "+strings.Join(parts, ", "))
	}
	if len(t.finalizers) > 0 {
		var parts []string
		for f, n := range t.finalizers {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		u.raise(api.NamespaceFinalizersRemaining, "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: "+strings.Join(parts, ", "))
	}
}

// apply sets every deletion condition in status, raised or well, and
// reports whether any changed; a condition's transition time moves only
// when its status does.
func (u *conditionUpdate) apply(status *api.NamespaceStatus, now time.Time) bool {
	raised := map[api.NamespaceConditionType]api.NamespaceCondition{}
	for _, c := range u.raised {
		raised[c.Type] = c
	}
	if _, ok := raised[api.NamespaceDeletionContentFailure]; !ok && len(u.deleteErrors) > 0 {
		msgs := append([]string(nil), u.deleteErrors...)
		sort.Strings(msgs)
		raised[api.NamespaceDeletionContentFailure] = api.NamespaceCondition{
			Type: api.NamespaceDeletionContentFailure, Status: api.ConditionTrue, Reason: "ContentDeletionFailed",
			Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(msgs), strings.Join(msgs, ", ")),
		}
	}
	changed := false
	for _, d := range deletionConditions {
		want, ok := raised[d.typ]
		if !ok {
			want = api.NamespaceCondition{Type: d.typ, Status: api.ConditionFalse, Reason: d.reason, Message: d.message}
		}
		i := -1
		for j := range status.Conditions {
			if status.Conditions[j].Type == d.typ {
				i = j
				break
			}
		}
		switch {
		case i < 0:
			want.LastTransitionTime = api.NewTime(now)
			status.Conditions = append(status.Conditions, want)
			changed = true
		case status.Conditions[i].Status != want.Status || status.Conditions[i].Reason != want.Reason || status.Conditions[i].Message != want.Message:
			if status.Conditions[i].Status != want.Status {
				want.LastTransitionTime = api.NewTime(now)
			} else {
				want.LastTransitionTime = status.Conditions[i].LastTransitionTime
			}
			status.Conditions[i] = want
			changed = true
		}
	}
	return changed
}
