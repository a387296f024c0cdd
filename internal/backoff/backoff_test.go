package backoff

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	now := time.Unix(1000, 0)
	b := New(10*time.Second, 40*time.Second, 0)
	b.Now = func() time.Time { return now }
	steps := []struct {
		advance time.Duration
		next    bool
		want    time.Duration
	}{
		{0, true, 10 * time.Second},
		{time.Second, true, 20 * time.Second},
		{time.Second, true, 40 * time.Second},
		{time.Second, true, 40 * time.Second},      // capped
		{81 * time.Second, true, 10 * time.Second}, // idle > 2*max: reset
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if s.next {
			b.Next("k", now)
		}
		if got := b.Get("k"); got != s.want {
			t.Errorf("step %d: delay %s, want %s", i, got, s.want)
		}
	}
	if in, left := b.InBackoffSince("k", now.Add(-3*time.Second)); !in || left != 7*time.Second {
		t.Errorf("InBackoffSince: %v %s", in, left)
	}
	if in, _ := b.InBackoffSince("k", now.Add(-11*time.Second)); in {
		t.Error("in back-off after the delay")
	}
	if in, _ := b.InBackoffSince("other", now); in {
		t.Error("unknown key in back-off")
	}
	b.Next("u", now)
	now = now.Add(4 * time.Second)
	if in, left := b.InBackoffSinceUpdate("u"); !in || left != 6*time.Second {
		t.Errorf("InBackoffSinceUpdate 4 s after Next: %v %s", in, left)
	}
	now = now.Add(6 * time.Second)
	if in, _ := b.InBackoffSinceUpdate("u"); in {
		t.Error("InBackoffSinceUpdate once the delay passed")
	}
}
