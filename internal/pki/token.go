package pki

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
)

// The bootstrap token Secret shape, identical to
// k8s.io/cluster-bootstrap/token/api.
const (
	// BootstrapTokenSecretPrefix + token id is the Secret's name.
	BootstrapTokenSecretPrefix = "bootstrap-token-"
	// BootstrapTokenNamespace holds every bootstrap token Secret.
	BootstrapTokenNamespace = "kube-system"
	// SecretTypeBootstrapToken is the Secret's type.
	SecretTypeBootstrapToken = api.SecretTypeBootstrapToken

	BootstrapTokenIDKey          = "token-id"
	BootstrapTokenSecretKey      = "token-secret"
	BootstrapTokenExpirationKey  = "expiration" // RFC 3339, UTC
	BootstrapTokenDescriptionKey = "description"
	BootstrapTokenExtraGroupsKey = "auth-extra-groups" // comma-separated
	BootstrapTokenUsagePrefix    = "usage-bootstrap-"
	// BootstrapTokenUsageAuthentication "true" lets the token authenticate.
	BootstrapTokenUsageAuthentication = "usage-bootstrap-authentication"
	// BootstrapTokenUsageSigningKey "true" lets the token sign cluster-info.
	BootstrapTokenUsageSigningKey = "usage-bootstrap-signing"

	// BootstrapUserPrefix + token id is the user a token authenticates as.
	BootstrapUserPrefix = "system:bootstrap:"
	// BootstrapDefaultGroup is every bootstrap token's group.
	BootstrapDefaultGroup = "system:bootstrappers"
	// BootstrapDefaultNodeGroup is the extra group kubeadm gives the tokens
	// it creates for joining nodes; default RBAC lets it file node CSRs.
	BootstrapDefaultNodeGroup = "system:bootstrappers:kubeadm:default-node-token"

	BootstrapTokenPattern   = `\A([a-z0-9]{6})\.([a-z0-9]{16})\z`
	BootstrapTokenIDPattern = `\A([a-z0-9]{6})\z`
	BootstrapGroupPattern   = `\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`
)

var (
	bootstrapTokenRe = regexp.MustCompile(BootstrapTokenPattern)
	bootstrapGroupRe = regexp.MustCompile(BootstrapGroupPattern)
)

// tokenAlphabet is the characters of token ids and secrets.
const tokenAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// GenerateBootstrapToken returns a new random token id (6 characters) and
// secret (16), drawn uniformly from [a-z0-9] with crypto/rand; the token is
// id + "." + secret.
func GenerateBootstrapToken() (id, secret string) {
	return randomString(6), randomString(16)
}

// randomString draws n characters of tokenAlphabet without modulo bias:
// bytes >= 252 (7*36) are dropped so every character is equally likely.
// crypto/rand.Read never fails (it aborts the program instead).
func randomString(n int) string {
	const limit = 256 - 256%len(tokenAlphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		_, _ = rand.Read(buf)
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, tokenAlphabet[int(b)%len(tokenAlphabet)])
			}
		}
	}
	return string(out)
}

// ParseBootstrapToken splits "id.secret". The error does not repeat the
// input: it may be a real secret with a typo.
func ParseBootstrapToken(s string) (id, secret string, err error) {
	m := bootstrapTokenRe.FindStringSubmatch(s)
	if m == nil {
		return "", "", fmt.Errorf("bootstrap token is not of the form %q", "[a-z0-9]{6}.[a-z0-9]{16}")
	}
	return m[1], m[2], nil
}

// ValidateBootstrapGroup checks an auth-extra-groups entry, with
// Kubernetes' message.
func ValidateBootstrapGroup(name string) error {
	if bootstrapGroupRe.MatchString(name) {
		return nil
	}
	return fmt.Errorf("bootstrap group %q is invalid (must match %s)", name, BootstrapGroupPattern)
}

// BootstrapTokenSecretName is "bootstrap-token-" + id.
func BootstrapTokenSecretName(id string) string { return BootstrapTokenSecretPrefix + id }

// BootstrapTokenSecret builds the kube-system Secret that makes id.secret a
// bootstrap token usable for authentication and signing, valid for ttl from
// now (ttl <= 0: no expiration) and authenticating with the extra groups,
// each of which must match BootstrapGroupPattern. Callers may add a
// description under BootstrapTokenDescriptionKey.
func BootstrapTokenSecret(id, secret string, ttl time.Duration, groups []string, now time.Time) (*api.Secret, error) {
	if _, _, err := ParseBootstrapToken(id + "." + secret); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := ValidateBootstrapGroup(g); err != nil {
			return nil, err
		}
	}
	data := map[string][]byte{
		BootstrapTokenIDKey:               []byte(id),
		BootstrapTokenSecretKey:           []byte(secret),
		BootstrapTokenUsageAuthentication: []byte("true"),
		BootstrapTokenUsageSigningKey:     []byte("true"),
	}
	if ttl > 0 {
		data[BootstrapTokenExpirationKey] = []byte(now.Add(ttl).UTC().Format(time.RFC3339))
	}
	if len(groups) > 0 {
		data[BootstrapTokenExtraGroupsKey] = []byte(strings.Join(groups, ","))
	}
	return &api.Secret{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: api.ObjectMeta{Name: BootstrapTokenSecretName(id), Namespace: BootstrapTokenNamespace},
		Type:       SecretTypeBootstrapToken,
		Data:       data,
	}, nil
}

// BootstrapTokenExpired reports whether a bootstrap token Secret has expired
// at now. An expiration that does not parse counts as expired, as in
// Kubernetes; no expiration never expires.
func BootstrapTokenExpired(s *api.Secret, now time.Time) bool {
	exp, ok := s.Data[BootstrapTokenExpirationKey]
	if !ok || len(exp) == 0 {
		return false
	}
	t, err := time.Parse(time.RFC3339, string(exp))
	if err != nil {
		return true
	}
	return !now.Before(t)
}

// BootstrapTokenGroups returns system:bootstrappers plus the Secret's
// auth-extra-groups, sorted and without duplicates, or an error naming the
// first invalid group.
func BootstrapTokenGroups(s *api.Secret) ([]string, error) {
	groups := []string{BootstrapDefaultGroup}
	if extra := string(s.Data[BootstrapTokenExtraGroupsKey]); extra != "" {
		for g := range strings.SplitSeq(extra, ",") {
			if err := ValidateBootstrapGroup(g); err != nil {
				return nil, err
			}
			groups = append(groups, g)
		}
	}
	return sortedUnique(groups), nil
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
