package controller

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// ScaledValueFromIntOrPercent resolves an int or "N%" of total, rounding a
// percentage up or down (kube's intstr.GetScaledValueFromIntOrPercent); nil
// is 0.
func ScaledValueFromIntOrPercent(v *api.IntOrString, total int, roundUp bool) (int, error) {
	if v == nil {
		return 0, nil
	}
	if v.Type == api.Int {
		return int(v.IntVal), nil
	}
	s, ok := strings.CutSuffix(v.StrVal, "%")
	if !ok {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid value %q: must be an integer or a percentage", v.StrVal)
	}
	pct, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: %w", v.StrVal, err)
	}
	f := float64(pct) * float64(total) / 100
	if roundUp {
		return int(math.Ceil(f)), nil
	}
	return int(math.Floor(f)), nil
}
