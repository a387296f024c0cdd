package token

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// fakeFetcher issues numbered tokens expiring after the asked lifetime
// from the manager's clock, or fails.
type fakeFetcher struct {
	now   func() time.Time
	n     int
	fail  bool
	asked []*api.TokenRequest
}

func (f *fakeFetcher) RequestToken(_ context.Context, ns, name string, tr *api.TokenRequest) (*api.TokenRequest, error) {
	f.asked = append(f.asked, tr)
	if f.fail {
		return nil, errors.New("apiserver down")
	}
	f.n++
	out := *tr
	out.Status = api.TokenRequestStatus{Token: fmt.Sprintf("%s/%s#%d", ns, name, f.n),
		ExpirationTimestamp: api.Time{Time: f.now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)}}
	return &out, nil
}

func request(uid api.UID, seconds int64) *api.TokenRequest {
	return &api.TokenRequest{Spec: api.TokenRequestSpec{ExpirationSeconds: &seconds,
		BoundObjectRef: &api.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: uid}}}
}

// A token is reused until 80% of its lifetime has passed (less the
// jitter), then replaced; a 24 h cap applies to long-lived tokens.
func TestRefreshTiming(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		lifetime int64
		jitter   time.Duration
		at       time.Duration // after issue
		fresh    bool          // a new token is fetched
	}{
		{"just issued", 3600, 0, 0, false},
		{"before 80%", 3600, 0, 47 * time.Minute, false},
		{"at 80% exactly", 3600, 0, 48 * time.Minute, false},
		{"past 80%", 3600, 0, 48*time.Minute + time.Second, true},
		{"jitter brings it forward", 3600, 10 * time.Second, 48*time.Minute - 5*time.Second, true},
		{"short token past 80%", 600, 0, 481 * time.Second, true},
		{"short token before 80%", 600, 0, 479 * time.Second, false},
		{"long token before 24h", 7 * 24 * 3600, 0, 23 * time.Hour, false},
		{"long token past 24h", 7 * 24 * 3600, 0, 24*time.Hour + time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := start
			f := &fakeFetcher{now: func() time.Time { return now }}
			m := NewManager(f)
			m.Now = func() time.Time { return now }
			m.jitter = func() time.Duration { return tc.jitter }
			first, err := m.GetServiceAccountToken(context.Background(), "ns", "default", request("u1", tc.lifetime))
			if err != nil {
				t.Fatal(err)
			}
			now = start.Add(tc.at)
			second, err := m.GetServiceAccountToken(context.Background(), "ns", "default", request("u1", tc.lifetime))
			if err != nil {
				t.Fatal(err)
			}
			if got := second.Status.Token != first.Status.Token; got != tc.fresh {
				t.Errorf("new token at +%s: %v, want %v (tokens %s, %s)", tc.at, got, tc.fresh, first.Status.Token, second.Status.Token)
			}
		})
	}
}

// A failed refresh keeps the cached token until it expires; tokens are
// cached per pod and per lifetime; a deleted pod's tokens are forgotten.
func TestFailuresAndKeys(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	f := &fakeFetcher{now: func() time.Time { return now }}
	m := NewManager(f)
	m.Now = func() time.Time { return now }
	m.jitter = func() time.Duration { return 0 }
	ctx := context.Background()
	get := func(uid api.UID, seconds int64) (string, error) {
		tr, err := m.GetServiceAccountToken(ctx, "ns", "default", request(uid, seconds))
		if err != nil {
			return "", err
		}
		return tr.Status.Token, nil
	}
	a, _ := get("u1", 600)
	if b, _ := get("u2", 600); b == a {
		t.Errorf("two pods share token %s", a)
	}
	if c, _ := get("u1", 3600); c == a {
		t.Errorf("two lifetimes share token %s", a)
	}
	f.fail = true
	now = now.Add(500 * time.Second) // refresh due, fetch fails
	if got, err := get("u1", 600); err != nil || got != a {
		t.Errorf("failed refresh: %q, %v; want the cached %q", got, err, a)
	}
	now = now.Add(100 * time.Second) // expired
	if _, err := get("u1", 600); err == nil {
		t.Error("expired token returned after a failed refresh")
	}
	f.fail = false
	d, err := get("u1", 600)
	if err != nil || d == a {
		t.Errorf("after recovery: %q, %v", d, err)
	}
	m.DeleteServiceAccountToken("u1")
	n := f.n
	if _, err := get("u1", 600); err != nil || f.n != n+1 {
		t.Errorf("deleted pod's token still cached (fetches %d -> %d)", n, f.n)
	}
	if f.asked[0].Spec.BoundObjectRef.Kind != "Pod" {
		t.Errorf("bound object %+v", f.asked[0].Spec.BoundObjectRef)
	}
}
