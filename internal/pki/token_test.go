package pki

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

func TestGenerateBootstrapToken(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	seen := map[string]bool{}
	counts := map[rune]int{}
	const n = 2000
	for range n {
		id, secret := GenerateBootstrapToken()
		tok := id + "." + secret
		if !re.MatchString(tok) {
			t.Fatalf("token %q not of the form [a-z0-9]{6}.[a-z0-9]{16}", tok)
		}
		if seen[tok] {
			t.Fatalf("duplicate token %q", tok)
		}
		seen[tok] = true
		gid, gsecret, err := ParseBootstrapToken(tok)
		if err != nil || gid != id || gsecret != secret {
			t.Fatalf("ParseBootstrapToken(%q) = %q, %q, %v", tok, gid, gsecret, err)
		}
		for _, r := range tok {
			counts[r]++
		}
	}
	// every one of the 36 characters shows up, roughly uniformly: 44000
	// draws give about 1222 each; a biased or truncated alphabet fails.
	if len(counts) != 37 { // 36 + '.'
		t.Fatalf("saw %d distinct characters, want 36 and '.'", len(counts)-1)
	}
	for r, c := range counts {
		if r != '.' && (c < 900 || c > 1600) {
			t.Errorf("character %q drawn %d times, expected about 1222", r, c)
		}
	}
}

func TestParseBootstrapToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"abcdef.0123456789abcdef", true},
		{"012345.abcdefghijklmnop", true},
		{"ABCDEF.0123456789abcdef", false},
		{"abcdef.0123456789ABCDEF", false},
		{"abcde.0123456789abcdef", false},
		{"abcdef.0123456789abcde", false},
		{"abcdef0123456789abcdef", false},
		{"abcdef:0123456789abcdef", false},
		{" abcdef.0123456789abcdef", false},
		{"abcdef.0123456789abcdef\n", false},
		{"abcdef.0123456789abcdef.x", false},
		{"", false},
	} {
		id, secret, err := ParseBootstrapToken(tc.in)
		if tc.ok != (err == nil) {
			t.Errorf("ParseBootstrapToken(%q) err = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if err != nil && (id != "" || secret != "" || strings.Contains(err.Error(), "0123456789")) {
			t.Errorf("ParseBootstrapToken(%q): returned parts or echoed the secret: %v", tc.in, err)
		}
	}
}

func TestBootstrapTokenSecret(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("X", 3600))
	s, err := BootstrapTokenSecret("abcdef", "0123456789abcdef", 24*time.Hour,
		[]string{BootstrapDefaultNodeGroup, "system:bootstrappers:extra"}, now)
	if err != nil {
		t.Fatal(err)
	}
	// the shape of k8s.io/cluster-bootstrap/token/api, spelled out
	if s.Kind != "Secret" || s.APIVersion != "v1" || s.Name != "bootstrap-token-abcdef" ||
		s.Namespace != "kube-system" || s.Type != "bootstrap.kubernetes.io/token" {
		t.Errorf("meta %+v %+v type %q", s.TypeMeta, s.ObjectMeta, s.Type)
	}
	want := map[string]string{
		"token-id":                       "abcdef",
		"token-secret":                   "0123456789abcdef",
		"expiration":                     "2026-03-02T09:00:00Z",
		"usage-bootstrap-authentication": "true",
		"usage-bootstrap-signing":        "true",
		"auth-extra-groups":              "system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:extra",
	}
	if len(s.Data) != len(want) {
		t.Errorf("data keys %v", slices.Sorted(maps.Keys(s.Data)))
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
		}
	}
	if BootstrapTokenExpired(s, now.Add(23*time.Hour)) || !BootstrapTokenExpired(s, now.Add(24*time.Hour)) {
		t.Error("expiry not at now+ttl")
	}
	g, err := BootstrapTokenGroups(s)
	if err != nil || !slices.Equal(g, []string{"system:bootstrappers", "system:bootstrappers:extra", "system:bootstrappers:kubeadm:default-node-token"}) {
		t.Errorf("groups %q, %v", g, err)
	}

	forever, err := BootstrapTokenSecret("abcdef", "0123456789abcdef", 0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := forever.Data["expiration"]; ok || BootstrapTokenExpired(forever, now.Add(100*365*24*time.Hour)) {
		t.Error("ttl 0 must mean no expiration")
	}
	if _, ok := forever.Data["auth-extra-groups"]; ok {
		t.Error("no groups must mean no auth-extra-groups key")
	}

	for _, bad := range []struct {
		id, secret string
		groups     []string
	}{
		{"ABCDEF", "0123456789abcdef", nil},
		{"abcdef", "short", nil},
		{"abcdef", "0123456789abcdef", []string{"system:masters"}},
		{"abcdef", "0123456789abcdef", []string{"system:bootstrappers:"}},
	} {
		if _, err := BootstrapTokenSecret(bad.id, bad.secret, time.Hour, bad.groups, now); err == nil {
			t.Errorf("BootstrapTokenSecret(%q, %q, %q): want error", bad.id, bad.secret, bad.groups)
		}
	}
}

func TestBootstrapTokenExpiredAndGroups(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(kv ...string) *api.Secret {
		s := &api.Secret{Data: map[string][]byte{}}
		for i := 0; i < len(kv); i += 2 {
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		s       *api.Secret
		expired bool
	}{
		{"none", sec(), false},
		{"future", sec("expiration", "2026-01-01T00:00:01Z"), false},
		{"now", sec("expiration", "2026-01-01T00:00:00Z"), true},
		{"past", sec("expiration", "2025-12-31T23:59:59Z"), true},
		{"offset zone", sec("expiration", "2026-01-01T00:30:00+01:00"), true},
		{"unparseable", sec("expiration", "tomorrow"), true},
	} {
		if got := BootstrapTokenExpired(tc.s, now); got != tc.expired {
			t.Errorf("%s: expired = %v, want %v", tc.name, got, tc.expired)
		}
	}
	for _, tc := range []struct {
		extra   string
		want    []string
		wantErr string
	}{
		{"", []string{"system:bootstrappers"}, ""},
		{"system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:b", []string{"system:bootstrappers", "system:bootstrappers:a", "system:bootstrappers:b"}, ""},
		{"system:bootstrappers:a,system:masters", nil, `bootstrap group "system:masters" is invalid`},
		{"system:bootstrappers:a,", nil, `bootstrap group "" is invalid`},
		{"system:bootstrappers:UP", nil, "is invalid"},
	} {
		g, err := BootstrapTokenGroups(sec("auth-extra-groups", tc.extra))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("groups %q: err = %v, want %q", tc.extra, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(g, tc.want) {
			t.Errorf("groups %q = %q, %v; want %q", tc.extra, g, err, tc.want)
		}
	}
}
