package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// ConfigFile is a daemon's --config: a versioned YAML or JSON file in a
// Kubernetes component's shape (KubeletConfiguration,
// KubeSchedulerConfiguration). Each field it supports maps to a flag; the
// file sets that flag unless the command line does (flags win, as in
// Kubernetes), so the flag's parsing and the daemon's Validate check file
// and command line alike. Fields it does not support are logged and
// ignored: a file written for Kubernetes loads.
type ConfigFile struct {
	APIVersion string
	Kind       string
	// New returns an empty object of the file's type to decode into. Its
	// fields are pointers, slices or maps, so that a field the file sets
	// to its zero value is told from one the file leaves out.
	New func() Config
}

// Config is a decoded config file.
type Config interface {
	// FlagValues lists what the file sets, each as the flag it maps to.
	FlagValues() (FlagValues, error)
}

// FlagValue is one field of a config file as a flag value.
type FlagValue struct {
	Field string // "nodeStatusUpdateFrequency"
	Flag  string // "node-status-update-frequency"
	Value string // in the flag's syntax: "10s"
}

// FlagValues are a config file's fields as flag values. Each method adds
// one field and skips it when the file leaves it out (nil).
type FlagValues []FlagValue

// String adds a string field (durations are strings in these files:
// "10s").
func (v *FlagValues) String(field, flag string, p *string) {
	if p != nil {
		*v = append(*v, FlagValue{field, flag, *p})
	}
}

// Int adds an integer field.
func (v *FlagValues) Int(field, flag string, p *int64) {
	if p != nil {
		*v = append(*v, FlagValue{field, flag, strconv.FormatInt(*p, 10)})
	}
}

// Seconds adds an integer field counting seconds to a duration flag.
func (v *FlagValues) Seconds(field, flag string, p *int64) {
	if p != nil {
		*v = append(*v, FlagValue{field, flag, strconv.FormatInt(*p, 10) + "s"})
	}
}

// Float adds a number field.
func (v *FlagValues) Float(field, flag string, p *float64) {
	if p != nil {
		*v = append(*v, FlagValue{field, flag, strconv.FormatFloat(*p, 'g', -1, 64)})
	}
}

// Bool adds a boolean field.
func (v *FlagValues) Bool(field, flag string, p *bool) {
	if p != nil {
		*v = append(*v, FlagValue{field, flag, strconv.FormatBool(*p)})
	}
}

// List adds a list field to a comma-separated flag.
func (v *FlagValues) List(field, flag string, l []string) {
	if l != nil {
		*v = append(*v, FlagValue{field, flag, strings.Join(l, ",")})
	}
}

// Map adds a map field to a flag of comma-separated KEY<sep>VALUE pairs,
// in key order: {"cpu": "200m"} with "=" is "cpu=200m".
func (v *FlagValues) Map(field, flag, sep string, m map[string]string) {
	if m == nil {
		return
	}
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		pairs = append(pairs, k+sep+m[k])
	}
	*v = append(*v, FlagValue{field, flag, strings.Join(pairs, ",")})
}

// LeaderElectionConfiguration is the leaderElection block of a config file
// (component-base's config/v1alpha1), as the --leader-elect* flags.
type LeaderElectionConfiguration struct {
	LeaderElect       *bool   `json:"leaderElect"`
	LeaseDuration     *string `json:"leaseDuration"`
	RenewDeadline     *string `json:"renewDeadline"`
	RetryPeriod       *string `json:"retryPeriod"`
	ResourceLock      *string `json:"resourceLock"`
	ResourceName      *string `json:"resourceName"`
	ResourceNamespace *string `json:"resourceNamespace"`
}

// AddTo adds the fields to v, named under prefix ("leaderElection").
func (c *LeaderElectionConfiguration) AddTo(v *FlagValues, prefix string) error {
	if c == nil {
		return nil
	}
	if c.ResourceLock != nil && *c.ResourceLock != "leases" {
		return fmt.Errorf("%s.resourceLock %q: only leases is supported", prefix, *c.ResourceLock)
	}
	v.Bool(prefix+".leaderElect", "leader-elect", c.LeaderElect)
	v.String(prefix+".leaseDuration", "leader-elect-lease-duration", c.LeaseDuration)
	v.String(prefix+".renewDeadline", "leader-elect-renew-deadline", c.RenewDeadline)
	v.String(prefix+".retryPeriod", "leader-elect-retry-period", c.RetryPeriod)
	v.String(prefix+".resourceName", "leader-elect-resource-name", c.ResourceName)
	v.String(prefix+".resourceNamespace", "leader-elect-resource-namespace", c.ResourceNamespace)
	return nil
}

// ClientConnectionConfiguration is the clientConnection block of a config
// file (component-base's config/v1alpha1), as ClientOptions' flags.
type ClientConnectionConfiguration struct {
	Kubeconfig *string  `json:"kubeconfig"`
	QPS        *float64 `json:"qps"`
	Burst      *int64   `json:"burst"`
}

// AddTo adds the fields to v, named under prefix ("clientConnection").
func (c *ClientConnectionConfiguration) AddTo(v *FlagValues, prefix string) {
	if c == nil {
		return
	}
	v.String(prefix+".kubeconfig", "kubeconfig", c.Kubeconfig)
	v.Float(prefix+".qps", "kube-api-qps", c.QPS)
	v.Int(prefix+".burst", "kube-api-burst", c.Burst)
}

// loadedConfig is a config file read and decoded, before its values are
// applied to the flags.
type loadedConfig struct {
	path   string
	values FlagValues
	// ignored are the dotted paths of the file's fields the daemon does
	// not support.
	ignored []string
	// applied are the values that set a flag (the command line did not).
	applied []FlagValue
}

// load reads, converts and decodes the file at path.
func (c *ConfigFile) load(path string) (*loadedConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(j, &raw); err != nil {
		return nil, fmt.Errorf("not a %s: the file is not a YAML or JSON object", c.Kind)
	}
	apiVersion, _ := raw["apiVersion"].(string)
	kind, _ := raw["kind"].(string)
	if apiVersion != c.APIVersion || kind != c.Kind {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want apiVersion %s, kind %s", apiVersion, kind, c.APIVersion, c.Kind)
	}
	obj := c.New()
	if err := json.Unmarshal(j, obj); err != nil {
		return nil, decodeError(err)
	}
	values, err := obj.FlagValues()
	if err != nil {
		return nil, err
	}
	// What the type kept of the file are the fields it supports.
	kept, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var known map[string]any
	if err := json.Unmarshal(kept, &known); err != nil {
		return nil, err
	}
	delete(raw, "apiVersion")
	delete(raw, "kind")
	return &loadedConfig{path: path, values: values, ignored: unknownFields("", raw, known)}, nil
}

// decodeError names the field of a value of the wrong type.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return err
	}
	t := te.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := "an object"
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "an integer"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Slice, reflect.Array:
		want = "a list"
	}
	return fmt.Errorf("%s: want %s, got %s", te.Field, want, te.Value)
}

// unknownFields lists the keys of raw (under prefix) that known lacks,
// looking into the objects both have.
func unknownFields(prefix string, raw, known map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		kv, ok := known[k]
		if !ok {
			out = append(out, prefix+k)
			continue
		}
		rm, rok := raw[k].(map[string]any)
		km, kok := kv.(map[string]any)
		if rok && kok {
			out = append(out, unknownFields(prefix+k+".", rm, km)...)
		}
	}
	return out
}

// apply sets the flags of fs that the command line left unset from the
// file's values.
func (l *loadedConfig) apply(fs *pflag.FlagSet) error {
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { onCommandLine[f.Name] = true })
	for _, v := range l.values {
		if onCommandLine[v.Flag] {
			continue
		}
		if err := fs.Set(v.Flag, v.Value); err != nil {
			return fmt.Errorf("%s: %w", v.Field, err)
		}
		l.applied = append(l.applied, v)
	}
	return nil
}

// blame lists the fields whose flags msg (a Validate error) names: the
// file set a value the daemon refuses.
func (l *loadedConfig) blame(msg string) []string {
	if l == nil {
		return nil
	}
	var fields []string
	for _, v := range l.applied {
		if namesFlag(msg, v.Flag) {
			fields = append(fields, v.Field)
		}
	}
	return fields
}

// namesFlag tells whether msg mentions --flag (not a longer flag that
// starts with it).
func namesFlag(msg, flag string) bool {
	needle := "--" + flag
	for i := 0; ; {
		j := strings.Index(msg[i:], needle)
		if j < 0 {
			return false
		}
		end := i + j + len(needle)
		if end == len(msg) || !isFlagChar(msg[end]) {
			return true
		}
		i = end
	}
}

func isFlagChar(c byte) bool {
	return c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
