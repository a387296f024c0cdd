package registry

import (
	"reflect"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestWithPropagationFinalizers(t *testing.T) {
	t.Parallel()
	orphan, fg, bg := api.DeletePropagationOrphan, api.DeletePropagationForeground, api.DeletePropagationBackground
	yes, no := true, false
	cases := []struct {
		name     string
		existing []string
		opts     api.DeleteOptions
		want     []string
	}{
		{"default adds nothing", []string{"a"}, api.DeleteOptions{}, []string{"a"}},
		{"background adds nothing", nil, api.DeleteOptions{PropagationPolicy: &bg}, nil},
		{"orphan", nil, api.DeleteOptions{PropagationPolicy: &orphan}, []string{"orphan"}},
		{"foreground", []string{"a"}, api.DeleteOptions{PropagationPolicy: &fg}, []string{"a", "foregroundDeletion"}},
		{"foreground twice", []string{"foregroundDeletion"}, api.DeleteOptions{PropagationPolicy: &fg}, []string{"foregroundDeletion"}},
		{"orphanDependents=true", nil, api.DeleteOptions{OrphanDependents: &yes}, []string{"orphan"}},
		{"orphanDependents=false", nil, api.DeleteOptions{OrphanDependents: &no}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := withPropagationFinalizers(c.existing, &c.opts)
			if len(got) == 0 && len(c.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestContinueTokenRoundTrip(t *testing.T) {
	t.Parallel()
	tok := encodeContinue(42, "default/web\x00")
	ct, err := decodeContinue(tok)
	if err != nil || ct.ResourceVersion != 42 || ct.StartKey != "default/web\x00" {
		t.Fatalf("round trip: %+v %v", ct, err)
	}
	for _, bad := range []string{"garbage!", encodeContinue(0, "x"), encodeContinue(5, "../etc")} {
		if _, err := decodeContinue(bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
}

func TestGenerateName(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		n := generateName("web-")
		if !strings.HasPrefix(n, "web-") || len(n) != 9 || strings.ContainsAny(n[4:], "aeiou013") {
			t.Fatalf("generated %q", n)
		}
		seen[n] = true
	}
	if len(seen) < 90 {
		t.Fatalf("only %d distinct names of 100", len(seen))
	}
	if n := generateName(strings.Repeat("a", 80)); len(n) != 63 {
		t.Fatalf("long base gives %d chars", len(n))
	}
}

func TestSpecEqualAndStatusCopy(t *testing.T) {
	t.Parallel()
	holder := "a"
	a := &api.Lease{ObjectMeta: api.ObjectMeta{Name: "x"}, Spec: api.LeaseSpec{HolderIdentity: &holder}}
	b := &api.Lease{ObjectMeta: api.ObjectMeta{Name: "x", Labels: map[string]string{"k": "v"}}, Spec: api.LeaseSpec{HolderIdentity: &holder}}
	if !specEqual(a, b) {
		t.Fatal("metadata-only difference counted as a spec change")
	}
	other := "b"
	b.Spec.HolderIdentity = &other
	if specEqual(a, b) {
		t.Fatal("spec difference not seen")
	}
	if hasStatus(a) {
		t.Fatal("Lease has no status")
	}
}
