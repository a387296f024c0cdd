package printers

import (
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// HumanDuration is kubectl's AGE format, apimachinery's
// duration.HumanDuration (the server's tables use the same).
func HumanDuration(d time.Duration) string { return duration.HumanDuration(d) }
