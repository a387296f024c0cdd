package encryption

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api/field"
)

// APIVersion and Kind are the only type of configuration file accepted.
const (
	APIVersion = "apiserver.config.k8s.io/v1"
	Kind       = "EncryptionConfiguration"
)

// EncryptionConfiguration is the file given to --encryption-provider-config.
type EncryptionConfiguration struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Resources is a list of rules; each names resources and the providers
	// that store them.
	Resources []ResourceConfiguration `json:"resources"`
}

// ResourceConfiguration is one rule: resources ("secrets", "deployments.apps",
// "*." for all core resources, "*.apps", "*.*") and their providers, the
// first of which writes.
type ResourceConfiguration struct {
	Resources []string                `json:"resources"`
	Providers []ProviderConfiguration `json:"providers"`
}

// ProviderConfiguration holds exactly one provider.
type ProviderConfiguration struct {
	AESGCM    *KeysConfiguration     `json:"aesgcm,omitempty"`
	AESCBC    *KeysConfiguration     `json:"aescbc,omitempty"`
	Secretbox *KeysConfiguration     `json:"secretbox,omitempty"`
	Identity  *IdentityConfiguration `json:"identity,omitempty"`
	// KMS is recognised so that it can be refused with a clear message.
	KMS json.RawMessage `json:"kms,omitempty"`

	// unknown are the member names that are not a provider, reported by
	// validation with their path.
	unknown []string
}

// KeysConfiguration is the key list of aescbc, aesgcm and secretbox; the first
// key writes.
type KeysConfiguration struct {
	Keys []Key `json:"keys"`
}

// Key is a named key; Secret is base64 of the raw key bytes.
type Key struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// IdentityConfiguration is the empty object of the identity provider.
type IdentityConfiguration struct{}

// providerNames are the members a provider entry may have.
var providerNames = []string{"aescbc", "aesgcm", "secretbox", "identity", "kms"}

// UnmarshalJSON records unknown members instead of failing at once, so that
// validation can name their path ("resources[0].providers[1]").
func (p *ProviderConfiguration) UnmarshalJSON(data []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	type plain ProviderConfiguration
	var out plain
	known := map[string]json.RawMessage{}
	for name, raw := range members {
		if slices.Contains(providerNames, name) {
			known[name] = raw
		} else {
			out.unknown = append(out.unknown, name)
		}
	}
	sort.Strings(out.unknown)
	b, err := json.Marshal(known)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return err
	}
	// "identity: {}" and a bare "identity:" (null in YAML) both mean identity.
	if raw, ok := known["identity"]; ok && out.Identity == nil && string(raw) == "null" {
		out.Identity = &IdentityConfiguration{}
	}
	*p = ProviderConfiguration(out)
	return nil
}

// Kubernetes' validation messages (k8s.io/apiserver/pkg/apis/apiserver/validation).
const (
	moreThanOneElementErr    = "more than one provider specified in a single element, should split into different list elements"
	keyLenErrFmt             = "secret is not of the expected length, got %d, expected one of %v"
	atLeastOneRequiredErrFmt = "at least one %s is required"
	mandatoryFieldErrFmt     = "%s is a mandatory field for a %s"
	base64EncodingErr        = "secrets must be base64 encoded"
	noProviderErr            = "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
	starResourceErr          = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
	resourceNameErr          = "resource name should not contain capital letters"
	overlapErr               = "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"
)

var (
	aesGCMKeySizes    = []int{16, 24, 32}
	aesCBCKeySizes    = []int{32}
	secretboxKeySizes = []int{32}
)

// Parse decodes and validates a configuration file's content (YAML or JSON).
func Parse(data []byte) (*EncryptionConfiguration, error) {
	var c EncryptionConfiguration
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("decode encryption configuration: %w", err)
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return nil, fmt.Errorf("unsupported encryption configuration %q, kind %q: expected apiVersion %s, kind %s",
			c.APIVersion, c.Kind, APIVersion, Kind)
	}
	if errs := Validate(&c); len(errs) > 0 {
		return nil, errors.New(errs.ToAggregate())
	}
	return &c, nil
}

// Validate checks c the way kube-apiserver does, plus what minik8s cannot
// serve (kms).
func Validate(c *EncryptionConfiguration) field.ErrorList {
	var errs field.ErrorList
	root := field.NewPath("resources")
	if len(c.Resources) == 0 {
		return append(errs, field.Required(root, fmt.Sprintf(atLeastOneRequiredErrFmt, "resources")))
	}
	for i, rc := range c.Resources {
		rp := root.Index(i).Child("resources")
		pp := root.Index(i).Child("providers")
		if len(rc.Resources) == 0 {
			errs = append(errs, field.Required(rp, fmt.Sprintf(atLeastOneRequiredErrFmt, rp)))
		}
		errs = append(errs, validateResources(rc.Resources, rp)...)
		if len(rc.Providers) == 0 {
			errs = append(errs, field.Required(pp, fmt.Sprintf(atLeastOneRequiredErrFmt, pp)))
		}
		for j, p := range rc.Providers {
			errs = append(errs, validateProvider(p, pp.Index(j))...)
		}
	}
	return errs
}

func validateResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	hasWildcard := false
	for _, r := range resources {
		if strings.HasPrefix(r, "*.") {
			hasWildcard = true
		}
	}
	seen := map[string]bool{}
	for k, r := range resources {
		ip := p.Index(k)
		switch {
		case r == "":
			errs = append(errs, field.Required(ip, "resource name is required"))
		case r == "*":
			errs = append(errs, field.Invalid(ip, r, starResourceErr))
		case r != strings.ToLower(r):
			errs = append(errs, field.Invalid(ip, r, resourceNameErr))
		case seen[r]:
			errs = append(errs, field.Duplicate(ip, r))
		case hasWildcard && len(resources) > 1 && r == "*.*":
			errs = append(errs, field.Invalid(ip, r, overlapErr))
		case hasWildcard && !strings.HasPrefix(r, "*.") && wildcardCovers(resources, r):
			errs = append(errs, field.Invalid(ip, r, overlapErr))
		}
		seen[r] = true
	}
	return errs
}

// wildcardCovers reports whether a "*.group" entry of resources covers r.
func wildcardCovers(resources []string, r string) bool {
	_, group := splitResource(r)
	return slices.Contains(resources, "*."+group)
}

func validateProvider(p ProviderConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range p.unknown {
		errs = append(errs, field.NotSupported(path.Child(name), name, providerNames))
	}
	found := 0
	for _, set := range []bool{p.AESGCM != nil, p.AESCBC != nil, p.Secretbox != nil, p.Identity != nil, p.KMS != nil} {
		if set {
			found++
		}
	}
	switch {
	case found == 0 && len(p.unknown) == 0:
		return append(errs, field.Invalid(path, field.OmitValue, noProviderErr))
	case found > 1:
		return append(errs, field.Invalid(path, field.OmitValue, moreThanOneElementErr))
	}
	switch {
	case p.AESGCM != nil:
		errs = append(errs, validateKeys(p.AESGCM.Keys, path.Child("aesgcm", "keys"), aesGCMKeySizes)...)
	case p.AESCBC != nil:
		errs = append(errs, validateKeys(p.AESCBC.Keys, path.Child("aescbc", "keys"), aesCBCKeySizes)...)
	case p.Secretbox != nil:
		errs = append(errs, validateKeys(p.Secretbox.Keys, path.Child("secretbox", "keys"), secretboxKeySizes)...)
	case p.KMS != nil:
		errs = append(errs, field.Forbidden(path.Child("kms"), "the kms provider is not supported by minik8s; use aescbc, aesgcm or secretbox"))
	}
	return errs
}

func validateKeys(keys []Key, p *field.Path, sizes []int) field.ErrorList {
	var errs field.ErrorList
	if len(keys) == 0 {
		return append(errs, field.Required(p, fmt.Sprintf(atLeastOneRequiredErrFmt, "keys")))
	}
	names := map[string]bool{}
	for i, k := range keys {
		kp := p.Index(i)
		if k.Name == "" {
			errs = append(errs, field.Required(kp.Child("name"), fmt.Sprintf(mandatoryFieldErrFmt, "name", "key")))
		} else if names[k.Name] {
			// Two secrets under one name: values written with the second
			// could never be told apart from the first's.
			errs = append(errs, field.Duplicate(kp.Child("name"), k.Name))
		}
		names[k.Name] = true
		if k.Secret == "" {
			errs = append(errs, field.Required(kp.Child("secret"), fmt.Sprintf(mandatoryFieldErrFmt, "secret", "key")))
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			errs = append(errs, field.Invalid(kp.Child("secret"), "REDACTED", base64EncodingErr))
			continue
		}
		if !slices.Contains(sizes, len(secret)) {
			errs = append(errs, field.Invalid(kp.Child("secret"), "REDACTED", fmt.Sprintf(keyLenErrFmt, len(secret), sizes)))
		}
	}
	return errs
}

// splitResource parses "deployments.apps" into ("deployments", "apps") and
// "secrets" into ("secrets", "") like schema.ParseGroupResource.
func splitResource(s string) (resource, group string) {
	resource, group, _ = strings.Cut(s, ".")
	return resource, group
}
