package naming

import (
	"reflect"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api/field"
)

type stringCheck struct {
	name  string
	fn    func(string) []string
	value string
	want  []string // nil means valid
}

const (
	subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	labelMsg     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

func TestStringValidators(t *testing.T) {
	t.Parallel()
	long64 := strings.Repeat("a", 64)
	tests := []stringCheck{
		{"label ok", IsDNS1123Label, "my-name", nil},
		{"label digits first", IsDNS1123Label, "123-abc", nil},
		{"label upper", IsDNS1123Label, "MyName", []string{labelMsg}},
		{"label dots", IsDNS1123Label, "a.b", []string{"must not contain dots"}},
		{"label empty", IsDNS1123Label, "", []string{labelMsg}},
		{"label too long", IsDNS1123Label, long64, []string{"must be no more than 63 characters"}},
		{"subdomain ok", IsDNS1123Subdomain, "example.com", nil},
		{"subdomain trailing dash", IsDNS1123Subdomain, "example-", []string{subdomainMsg}},
		{"subdomain double dot", IsDNS1123Subdomain, "a..b", []string{subdomainMsg}},
		{"subdomain too long", IsDNS1123Subdomain, strings.Repeat("a", 254), []string{"must be no more than 253 characters"}},
		{"1035 ok", IsDNS1035Label, "abc-123", nil},
		{"1035 digit first", IsDNS1035Label, "1abc", []string{"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"}},
		{"wildcard ok", IsWildcardDNS1123Subdomain, "*.example.com", nil},
		{"wildcard inner star", IsWildcardDNS1123Subdomain, "*.*.example.com", []string{"a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
		{"qualified plain", IsQualifiedName, "app", nil},
		{"qualified prefixed", IsQualifiedName, "app.kubernetes.io/name", nil},
		{"qualified upper", IsQualifiedName, "MyName", nil},
		{"qualified empty prefix", IsQualifiedName, "/name", []string{"prefix part must be non-empty"}},
		{"qualified empty name", IsQualifiedName, "example.com/", []string{"name part must be non-empty", "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}},
		{"qualified bad prefix", IsQualifiedName, "Example.com/a", []string{"prefix part " + subdomainMsg}},
		{"qualified two slashes", IsQualifiedName, "a/b/c", []string{"a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
		{"qualified long name", IsQualifiedName, long64, []string{"name part must be no more than 63 bytes"}},
		{"prefixed required", IsPrefixedQualifiedName, "key", []string{"must include a prefix (e.g. 'example.com/key')"}},
		{"prefixed ok", IsPrefixedQualifiedName, "example.com/key", nil},
		{"label value empty", IsValidLabelValue, "", nil},
		{"label value ok", IsValidLabelValue, "my_value.1", nil},
		{"label value bad end", IsValidLabelValue, "v-", []string{"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}},
		{"label value long", IsValidLabelValue, long64, []string{"must be no more than 63 bytes"}},
		{"port name ok", IsValidPortName, "http-alt", nil},
		{"port name digits", IsValidPortName, "8080", []string{"must contain at least one letter (a-z)"}},
		{"port name many", IsValidPortName, "-Ab--cdefghijklmn-", []string{"must be no more than 15 characters", "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)", "must not contain consecutive hyphens", "must not begin or end with a hyphen"}},
		{"c ident ok", IsCIdentifier, "_my_Name1", nil},
		{"c ident bad", IsCIdentifier, "1abc", []string{"a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"}},
		{"env relaxed digit first", IsEnvVarName, "1FOO", nil},
		{"env relaxed equals", IsEnvVarName, "A=B", []string{"a valid environment variable name must consist only of printable ASCII characters other than '='"}},
		{"env relaxed empty", IsEnvVarName, "", []string{"environment variable name must be non-empty"}},
		{"env relaxed unicode", IsEnvVarName, "naïve", []string{"a valid environment variable name must consist only of printable ASCII characters other than '='"}},
		{"env strict dotdot", IsStrictEnvVarName, "..a", []string{"must not start with '..'"}},
		{"configmap key ok", IsConfigMapKey, "key.name_1-x", nil},
		{"configmap key dot", IsConfigMapKey, ".", []string{"must not be '.'"}},
		{"configmap key slash", IsConfigMapKey, "a/b", []string{"a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"}},
		{"header ok", IsHTTPHeaderName, "X-Header-Name", nil},
		{"header bad", IsHTTPHeaderName, "X_Header", []string{"a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"}},
		{"percent ok", IsValidPercent, "25%", nil},
		{"percent bad", IsValidPercent, "25", []string{"a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"}},
		{"ip v4", IsValidIP, "10.9.8.7", nil},
		{"ip v6", IsValidIP, "2001:db8::ffff", nil},
		{"ip garbage", IsValidIP, "10.9.8", []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}},
		{"ip zone", IsValidIP, "fe80::1%eth0", []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}},
		{"ip leading zero", IsValidIP, "010.009.008.007", []string{"must not have leading 0s"}},
		{"ip mapped", IsValidIP, "::ffff:1.2.3.4", []string{"must not be an IPv4-mapped IPv6 address"}},
		{"ip noncanonical", IsValidIP, "FE80:0:0:0:0:0:0:0abc", []string{`must be in canonical form ("fe80::abc")`}},
		{"cidr ok", IsValidCIDR, "10.0.0.0/8", nil},
		{"cidr v6 ok", IsValidCIDR, "2001:db8::/64", nil},
		{"cidr bits set", IsValidCIDR, "10.0.0.5/8", []string{"must not have bits set beyond the prefix length"}},
		{"cidr leading zero", IsValidCIDR, "10.0.0.0/08", []string{"must not have leading 0s in IP or prefix length"}},
		{"cidr too many bits", IsValidCIDR, "10.0.0.0/33", []string{"must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"cidr no slash", IsValidCIDR, "10.0.0.0", []string{"must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"cidr noncanonical", IsValidCIDR, "2001:DB8::/64", []string{`must be in canonical form ("2001:db8::/64")`}},
		{"path segment ok", IsValidPathSegmentName, "a.b", nil},
		{"path segment dotdot", IsValidPathSegmentName, "..", []string{"may not be '..'"}},
		{"path segment both", IsValidPathSegmentName, "a/%", []string{"may not contain '/'", "may not contain '%'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.fn(tt.value)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%q:\n got  %q\n want %q", tt.value, got, tt.want)
			}
		})
	}
}

func TestKubernetesExactWording(t *testing.T) {
	t.Parallel()
	// Kubernetes' RegexError puts "', " after every example and " or " between
	// them, so real messages read "'my-name',  or '123-abc'" (two spaces).
	want := "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	if got := IsDNS1123Label("A"); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := IsDNS1123Subdomain("A"); len(got) != 1 || got[0] != subdomainMsg {
		t.Fatalf("got %q, want %q", got, subdomainMsg)
	}
}

func TestLegacyIPAndCIDR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fn     func(string, bool) []string
		value  string
		strict bool
		valid  bool
	}{
		{"ip sloppy zeros", IsValidIPForLegacyField, "010.0.0.1", false, true},
		{"ip strict zeros", IsValidIPForLegacyField, "010.0.0.1", true, false},
		{"ip noncanonical legacy", IsValidIPForLegacyField, "FE80::ABC", true, true},
		{"cidr ifaddr sloppy", IsValidCIDRForLegacyField, "10.0.0.5/8", false, true},
		{"cidr ifaddr strict", IsValidCIDRForLegacyField, "10.0.0.5/8", true, false},
		{"cidr garbage", IsValidCIDRForLegacyField, "abc/8", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := tt.fn(tt.value, tt.strict)
			if (len(errs) == 0) != tt.valid {
				t.Errorf("%q strict=%v: errs %q, want valid=%v", tt.value, tt.strict, errs, tt.valid)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	t.Parallel()
	if errs := IsValidPortNum(0); len(errs) != 1 || errs[0] != "must be between 1 and 65535, inclusive" {
		t.Errorf("port 0: %q", errs)
	}
	if errs := IsValidPortNum(65535); len(errs) != 0 {
		t.Errorf("port 65535: %q", errs)
	}
	if errs := IsInRange(5, 1, 4); len(errs) != 1 || errs[0] != "must be between 1 and 4, inclusive" {
		t.Errorf("range: %q", errs)
	}
	if errs := IsValidUserID(-1); len(errs) != 1 {
		t.Errorf("uid -1: %q", errs)
	}
	if errs := IsValidGroupID(1 << 31); len(errs) != 1 {
		t.Errorf("gid 2^31: %q", errs)
	}
}

func TestNameFuncs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fn     ValidateNameFunc
		value  string
		prefix bool
		valid  bool
	}{
		{"subdomain prefix dash", NameIsDNSSubdomain, "web-", true, true},
		{"subdomain name dash", NameIsDNSSubdomain, "web-", false, false},
		{"label prefix dash", NameIsDNSLabel, "ns-", true, true},
		{"label dots", ValidateNamespaceName, "a.b", false, false},
		{"1035 prefix", NameIsDNS1035Label, "svc-", true, true},
		{"1035 digit", NameIsDNS1035Label, "1svc", false, false},
		{"path prefix dot", ValidatePathSegmentName, ".", true, true},
		{"path name dot", ValidatePathSegmentName, ".", false, false},
		{"path slash", ValidatePathSegmentName, "a/b", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := tt.fn(tt.value, tt.prefix)
			if (len(errs) == 0) != tt.valid {
				t.Errorf("%q prefix=%v: %q, want valid=%v", tt.value, tt.prefix, errs, tt.valid)
			}
		})
	}
}

func TestFullyQualified(t *testing.T) {
	t.Parallel()
	p := field.NewPath("spec", "group")
	tests := []struct {
		fn    func(*field.Path, string) field.ErrorList
		value string
		want  string // "" means valid
	}{
		{IsFullyQualifiedName, "a.b.c", ""},
		{IsFullyQualifiedName, "a.b", "should be a domain with at least three segments separated by dots"},
		{IsFullyQualifiedName, "", "Required value"},
		{IsFullyQualifiedDomainName, "example.com.", ""},
		{IsFullyQualifiedDomainName, "example", "should be a domain with at least two segments separated by dots"},
	}
	for _, tt := range tests {
		errs := tt.fn(p, tt.value)
		if tt.want == "" {
			if len(errs) != 0 {
				t.Errorf("%q: unexpected %v", tt.value, errs)
			}
			continue
		}
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.value, errs, tt.want)
		}
	}
}
