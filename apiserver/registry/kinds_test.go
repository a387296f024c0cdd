package registry

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

// Every entry of the table of kinds names a served resource: a misspelt key
// would leave its kind on BaseStrategy without a word.
func TestKindsAreServed(t *testing.T) {
	t.Parallel()
	served := map[string]bool{}
	for _, ri := range api.Resources {
		served[kindKey(ri)] = true
	}
	for key, k := range kinds {
		if !served[key] {
			t.Errorf("kinds[%q] is not in api.Resources", key)
		}
		if k.strategy == nil {
			t.Errorf("kinds[%q] has no strategy", key)
		}
	}
}
