package encryption

import (
	"fmt"
	"os"
)

// Transformers are the transformers of a configuration, by resource.
// A nil *Transformers (no --encryption-provider-config) gives Identity for
// every resource.
type Transformers struct {
	byResource map[groupResource]Transformer
}

type groupResource struct{ group, resource string }

// anyResource is the resource of "*.group" rules; anyGroup the group of "*.*".
const (
	anyResource = "*"
	anyGroup    = "*"
)

// Load reads, validates and builds the configuration file at path, as given
// to --encryption-provider-config.
func Load(path string) (*Transformers, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read encryption provider configuration: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("encryption provider configuration %s: %w", path, err)
	}
	t, err := New(c)
	if err != nil {
		return nil, fmt.Errorf("encryption provider configuration %s: %w", path, err)
	}
	return t, nil
}

// New builds the transformers of a validated configuration. Like
// kube-apiserver, a resource named by several rules reads with all their
// providers in order (the first rule's first key writes), and a rule that an
// earlier wildcard ("*.", "*.group", "*.*") would mask is an error.
func New(c *EncryptionConfiguration) (*Transformers, error) {
	if errs := Validate(c); len(errs) > 0 {
		return nil, fmt.Errorf("%s", errs.ToAggregate())
	}
	chains := map[groupResource]*chain{}
	for _, rc := range c.Resources {
		ch, err := newChain(rc.Providers)
		if err != nil {
			return nil, err
		}
		for _, r := range rc.Resources {
			res, group := splitResource(r)
			gr := groupResource{group: group, resource: res}
			if _, masked := chains[groupResource{group: group, resource: anyResource}]; masked {
				return nil, fmt.Errorf("resource %q is masked by earlier rule %q", r, "*."+group)
			}
			if _, masked := chains[groupResource{group: anyGroup, resource: anyResource}]; masked {
				return nil, fmt.Errorf("resource %q is masked by earlier rule %q", r, "*.*")
			}
			if prev, ok := chains[gr]; ok {
				merged := &chain{readers: append(append([]prefixed{}, prev.readers...), ch.readers...)}
				chains[gr] = merged
				continue
			}
			chains[gr] = ch
		}
	}
	t := &Transformers{byResource: make(map[groupResource]Transformer, len(chains))}
	for gr, ch := range chains {
		t.byResource[gr] = ch
	}
	return t, nil
}

// For returns the transformer of resource in group ("" for core), e.g.
// For("secrets", "") or For("deployments", "apps"): an exact rule, else a
// "*.group" rule, else "*.*", else Identity.
func (t *Transformers) For(resource, group string) Transformer {
	if t == nil {
		return Identity()
	}
	for _, gr := range []groupResource{{group, resource}, {group, anyResource}, {anyGroup, anyResource}} {
		if tr, ok := t.byResource[gr]; ok {
			return tr
		}
	}
	return Identity()
}

// Configured reports whether a rule of the configuration covers resource in
// group, for logging at start-up.
func (t *Transformers) Configured(resource, group string) bool {
	return t.For(resource, group) != Identity()
}
