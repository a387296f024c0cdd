package cronjob

import (
	"fmt"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api/cron"
)

// Schedule is a parsed cron schedule: the first time after t it names.
type Schedule = cron.Schedule

// ParseSchedule parses spec in the time zone tz ("" = the controller's
// local zone) as kube does: five fields or a descriptor.
func ParseSchedule(spec, tz string) (Schedule, error) {
	return cron.ParseIn(spec, tz)
}

// hasTZ reports a schedule carrying its own TZ= or CRON_TZ= prefix.
func hasTZ(spec string) bool {
	return strings.Contains(spec, "TZ")
}

type missed int

const (
	noneMissed missed = iota
	fewMissed
	manyMissed
)

// mostRecent returns the earliest time considered (last schedule time or
// creation, moved up to now-startingDeadlineSeconds when withDeadline),
// the most recent schedule time not after now (nil if none), and how many
// were missed, kube's mostRecentScheduleTime.
func mostRecent(created time.Time, last *time.Time, deadline *int64, now time.Time, s Schedule, withDeadline bool) (time.Time, *time.Time, missed, error) {
	earliest := created
	if last != nil {
		earliest = *last
	}
	if withDeadline && deadline != nil {
		if d := now.Add(-time.Duration(*deadline) * time.Second); d.After(earliest) {
			earliest = d
		}
	}
	t1 := s.Next(earliest)
	t2 := s.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, noneMissed, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	n := int64(now.Sub(t1).Seconds())/between + 1
	var latest time.Time
	from := t1.Add(time.Duration((n-2)*between) * time.Second)
	for t := s.Next(from); !t.After(now); t = s.Next(t) {
		latest = t
	}
	m := fewMissed
	if n > 100 {
		m = manyMissed
	}
	if latest.IsZero() {
		return earliest, nil, m, nil
	}
	return earliest, &latest, m, nil
}

// nextScheduleDelta pads requeues against clock skew, as kube does.
const nextScheduleDelta = 100 * time.Millisecond

// requeueAfter is how long until the next schedule time after now.
func requeueAfter(created time.Time, last *time.Time, now time.Time, s Schedule) time.Duration {
	earliest, recent, m, err := mostRecent(created, last, nil, now, s, false)
	switch {
	case err != nil:
		recent = &now
	case recent == nil && m == noneMissed:
		recent = &earliest
	case recent == nil:
		recent = &now
	}
	return s.Next(*recent).Add(nextScheduleDelta).Sub(now)
}
