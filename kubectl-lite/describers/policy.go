package describers

import (
	"time"

	"github.com/minik8s/minik8s/api"
)

// describePDB is kubectl's PodDisruptionBudgetDescriber: the budget
// (minAvailable wins when both are set), the selector and the status
// counts the disruption controller keeps.
func describePDB(w *prefixWriter, pdb *api.PodDisruptionBudget, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", pdb.Name)
	w.write(level0, "Namespace:\t%s\n", pdb.Namespace)
	if pdb.Spec.MinAvailable != nil {
		w.write(level0, "Min available:\t%s\n", pdb.Spec.MinAvailable.String())
	} else if pdb.Spec.MaxUnavailable != nil {
		w.write(level0, "Max unavailable:\t%s\n", pdb.Spec.MaxUnavailable.String())
	}
	if pdb.Spec.Selector != nil {
		w.write(level0, "Selector:\t%s\n", selectorString(pdb.Spec.Selector))
	} else {
		w.write(level0, "Selector:\t<unset>\n")
	}
	st := pdb.Status
	w.write(level0, "Status:\n")
	w.write(level2, "Allowed disruptions:\t%d\n", st.DisruptionsAllowed)
	w.write(level2, "Current:\t%d\n", st.CurrentHealthy)
	w.write(level2, "Desired:\t%d\n", st.DesiredHealthy)
	w.write(level2, "Total:\t%d\n", st.ExpectedPods)
	w.events(evs, now)
}
