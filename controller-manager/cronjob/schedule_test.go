package cronjob

import (
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	base := time.Date(2026, 3, 14, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		spec, tz string
		want     time.Time
		wantErr  bool
	}{
		{spec: "*/5 * * * *", want: base.Add(5 * time.Minute)},
		{spec: "0 * * * *", want: time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)},
		{spec: "@hourly", want: time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)},
		{spec: "@daily", want: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)},
		{spec: "@midnight", want: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)},
		{spec: "@weekly", want: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}, // a Sunday
		{spec: "@monthly", want: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
		{spec: "@yearly", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{spec: "@annually", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{spec: "@every 90s", want: base.Add(90 * time.Second)},
		{spec: "0 9 * * *", tz: "Asia/Tokyo", want: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}, // 09:00 JST
		{spec: "* * * *", wantErr: true},
		{spec: "@fortnightly", wantErr: true},
		{spec: "61 * * * *", wantErr: true},
	}
	for _, tt := range tests {
		s, err := ParseSchedule(tt.spec, tt.tz)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err = %v", tt.spec, err)
			continue
		}
		if err == nil && !s.Next(base).Equal(tt.want) {
			t.Errorf("%q in %q: next = %v, want %v", tt.spec, tt.tz, s.Next(base).UTC(), tt.want)
		}
	}
}

func TestMostRecent(t *testing.T) {
	created := time.Date(2026, 3, 14, 10, 0, 30, 0, time.UTC)
	hourly, _ := ParseSchedule("0 * * * *", "")
	minutely, _ := ParseSchedule("* * * * *", "")
	ptr := func(v int64) *int64 { return &v }
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	tests := []struct {
		name     string
		s        Schedule
		last     *time.Time
		deadline *int64
		now      time.Time
		want     *time.Time
		missed   missed
	}{
		{name: "not yet", s: hourly, now: at(10, 59)},
		{name: "first", s: hourly, now: at(11, 5), want: new(at(11, 0))},
		{name: "several missed: the latest", s: hourly, now: at(14, 5), want: new(at(14, 0)), missed: fewMissed},
		{name: "after last", s: hourly, last: new(at(11, 0)), now: at(11, 30)},
		{name: "deadline moves the window", s: minutely, deadline: ptr(30), now: at(12, 0).Add(10 * time.Second), want: new(at(12, 0))},
		{name: "too many", s: minutely, now: at(13, 0), want: new(at(13, 0)), missed: manyMissed},
	}
	for _, tt := range tests {
		_, got, m, err := mostRecent(created, tt.last, tt.deadline, tt.now, tt.s, true)
		if err != nil || m != tt.missed || (got == nil) != (tt.want == nil) || got != nil && !got.Equal(*tt.want) {
			t.Errorf("%s: got %v missed %v err %v, want %v missed %v", tt.name, got, m, err, tt.want, tt.missed)
		}
	}
	if d := requeueAfter(created, nil, at(10, 30), hourly); d != 30*time.Minute+nextScheduleDelta {
		t.Errorf("requeue = %v", d)
	}
}
