package cron

import (
	"fmt"
	"time"
	_ "time/tzdata" // timeZone works without the host's zoneinfo

	robfig "github.com/robfig/cron/v3"
)

// Schedule is a parsed schedule: the first time after t that it names.
type Schedule interface {
	Next(t time.Time) time.Time
}

// Parse parses a standard schedule: five fields or a descriptor, with an
// optional TZ= or CRON_TZ= prefix. Its errors are robfig/cron's, which
// kube-apiserver returns verbatim in its validation causes.
func Parse(spec string) (s Schedule, err error) {
	// robfig/cron panics on some malformed specs.
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("failed to parse cron schedule: %v", r)
		}
	}()
	return robfig.ParseStandard(spec)
}

// ParseIn parses spec in the time zone tz ("" = the process' local zone).
func ParseIn(spec, tz string) (Schedule, error) {
	if tz != "" {
		spec = "TZ=" + tz + " " + spec
	}
	return Parse(spec)
}
