package job

import (
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// An Indexed job's spec.successPolicy declares it succeeded before every
// index did (kube's JobSuccessPolicy, GA since v1.33): the first rule met,
// in order, gives the job the SuccessCriteriaMet condition with reason
// SuccessPolicy and message "Matched rules at index N"; the job then
// stops its remaining pods, counts them as it does for any finishing job
// (a pod stopped this way is not a failure), and once none is left gets
// Complete with the same reason and message.

// matchSuccessPolicy is kube's: the message of the first rule of policy
// that done (the succeeded indexes) meets. A rule with succeededIndexes is
// met when done holds all of them, or succeededCount of them; a rule with
// only succeededCount when done holds that many indexes. A rule whose
// succeededIndexes name no index below completions is never met.
func matchSuccessPolicy(policy *api.SuccessPolicy, completions int32, done map[int]bool) (string, bool) {
	if policy == nil || len(done) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		met := false
		switch {
		case rule.SucceededIndexes != nil:
			required := parseIndexes(*rule.SucceededIndexes, completions)
			if len(required) == 0 {
				continue
			}
			contains := 0
			for ix := range required {
				if done[ix] {
					contains++
				}
			}
			met = contains == len(required) || rule.SucceededCount != nil && contains >= int(*rule.SucceededCount)
		case rule.SucceededCount != nil:
			met = len(done) >= int(*rule.SucceededCount)
		}
		if met {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}
