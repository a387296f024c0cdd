package naming

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/minik8s/minik8s/api/field"
)

// Length limits, as in k8s.io/apimachinery/pkg/util/validation.
const (
	DNS1123LabelMaxLength     = 63
	DNS1123SubdomainMaxLength = 253
	DNS1035LabelMaxLength     = 63
	LabelValueMaxLength       = 63
	// QualifiedNameMaxLength bounds the name part of a qualified name (label key).
	QualifiedNameMaxLength = 63
	// PortNameMaxLength is the IANA_SVC_NAME limit.
	PortNameMaxLength = 15
)

// MaxLenError explains a "string too long" failure in Kubernetes' words.
func MaxLenError(length int) string {
	return fmt.Sprintf("must be no more than %d characters", length)
}

// maxBytesError is the wording Kubernetes' newer content validators (label
// keys and values) use for the same failure.
func maxBytesError(length int) string {
	return fmt.Sprintf("must be no more than %d bytes", length)
}

// RegexError explains a regular-expression failure, listing examples of
// valid values, in Kubernetes' words.
func RegexError(msg, re string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + re + "')"
	}
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + e + "', ")
	}
	b.WriteString("regex used for validation is '" + re + "')")
	return b.String()
}

// EmptyError explains an empty-string failure.
func EmptyError() string { return "must be non-empty" }

// InclusiveRangeError explains a numeric range failure.
func InclusiveRangeError(lo, hi int) string {
	return fmt.Sprintf("must be between %d and %d, inclusive", lo, hi)
}

const (
	dns1123LabelFmt    = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelErrMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"

	dns1123SubdomainFmt    = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainErrMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"

	dns1035LabelFmt    = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelErrMsg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"

	wildcardDNS1123SubdomainFmt    = "\\*\\." + dns1123SubdomainFmt
	wildcardDNS1123SubdomainErrMsg = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character"
)

var (
	dns1123LabelRegexp             = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRegexp         = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	dns1035LabelRegexp             = regexp.MustCompile("^" + dns1035LabelFmt + "$")
	wildcardDNS1123SubdomainRegexp = regexp.MustCompile("^" + wildcardDNS1123SubdomainFmt + "$")
)

// IsDNS1123Label tests for a lowercase RFC 1123 label (namespace names,
// container names, port names of services).
func IsDNS1123Label(value string) []string {
	var errs []string
	if len(value) > DNS1123LabelMaxLength {
		errs = append(errs, MaxLenError(DNS1123LabelMaxLength))
	}
	if !isDNS1123Label(value) {
		if isDNS1123Subdomain(value) {
			// A valid subdomain that is not a valid label: the length was
			// already reported, so the problem is the dots.
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, RegexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// IsDNS1123Subdomain tests for a lowercase RFC 1123 subdomain (most object names).
func IsDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, MaxLenError(DNS1123SubdomainMaxLength))
	}
	if !isDNS1123Subdomain(value) {
		errs = append(errs, RegexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsDNS1035Label tests for an RFC 1035 label (service names).
func IsDNS1035Label(value string) []string {
	var errs []string
	if len(value) > DNS1035LabelMaxLength {
		errs = append(errs, MaxLenError(DNS1035LabelMaxLength))
	}
	if !dns1035LabelRegexp.MatchString(value) {
		errs = append(errs, RegexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

// IsWildcardDNS1123Subdomain tests for a wildcard subdomain such as
// "*.example.com" (RFC 1034 section 4.3.3).
func IsWildcardDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, MaxLenError(DNS1123SubdomainMaxLength))
	}
	if !wildcardDNS1123SubdomainRegexp.MatchString(value) {
		errs = append(errs, RegexError(wildcardDNS1123SubdomainErrMsg, wildcardDNS1123SubdomainFmt, "*.example.com"))
	}
	return errs
}

// IsFullyQualifiedName checks that name is a DNS subdomain with at least
// three dot-separated segments (CRD-style group names).
func IsFullyQualifiedName(fldPath *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return append(errs, field.Required(fldPath, ""))
	}
	if msgs := IsDNS1123Subdomain(name); len(msgs) > 0 {
		return append(errs, field.Invalid(fldPath, name, strings.Join(msgs, ",")))
	}
	if strings.Count(name, ".") < 2 {
		return append(errs, field.Invalid(fldPath, name, "should be a domain with at least three segments separated by dots"))
	}
	return errs
}

// IsFullyQualifiedDomainName checks that name is a domain with at least two
// segments; a trailing dot is accepted.
func IsFullyQualifiedDomainName(fldPath *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return append(errs, field.Required(fldPath, ""))
	}
	name = strings.TrimSuffix(name, ".")
	if msgs := IsDNS1123Subdomain(name); len(msgs) > 0 {
		return append(errs, field.Invalid(fldPath, name, strings.Join(msgs, ",")))
	}
	if !strings.Contains(name, ".") {
		return append(errs, field.Invalid(fldPath, name, "should be a domain with at least two segments separated by dots"))
	}
	for _, label := range strings.Split(name, ".") {
		if msgs := IsDNS1123Label(label); len(msgs) > 0 {
			return append(errs, field.Invalid(fldPath, label, strings.Join(msgs, ",")))
		}
	}
	return errs
}

const (
	qualifiedNameCharFmt    = "[A-Za-z0-9]"
	qualifiedNameExtCharFmt = "[-A-Za-z0-9_.]"
	qualifiedNameFmt        = "(" + qualifiedNameCharFmt + qualifiedNameExtCharFmt + "*)?" + qualifiedNameCharFmt
	qualifiedNameErrMsg     = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	labelValueFmt    = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)

var (
	qualifiedNameRegexp = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRegexp    = regexp.MustCompile("^" + labelValueFmt + "$")
)

// IsQualifiedName tests for what Kubernetes calls a qualified name: a label
// key, annotation key or finalizer, an optional DNS subdomain prefix and '/'
// followed by a name of at most 63 characters.
func IsQualifiedName(value string) []string {
	var errs []string
	var name string
	prefix, rest, found := strings.Cut(value, "/")
	switch {
	case !found:
		name = value
	case strings.Contains(rest, "/"):
		return []string{"a valid label key " + RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	default:
		name = rest
		if prefix == "" {
			errs = append(errs, "prefix part "+EmptyError())
		} else {
			for _, msg := range IsDNS1123Subdomain(prefix) {
				errs = append(errs, "prefix part "+msg)
			}
		}
	}
	if name == "" {
		errs = append(errs, "name part "+EmptyError())
	} else if len(name) > QualifiedNameMaxLength {
		errs = append(errs, "name part "+maxBytesError(QualifiedNameMaxLength))
	}
	if !isQualifiedNamePart(name) {
		errs = append(errs, "name part "+RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsPrefixedQualifiedName is IsQualifiedName that also requires the prefix
// ("example.com/key", not "key").
func IsPrefixedQualifiedName(value string) []string {
	if errs := IsQualifiedName(value); len(errs) > 0 {
		return errs
	}
	if !strings.Contains(value, "/") {
		return []string{"must include a prefix (e.g. 'example.com/key')"}
	}
	return nil
}

// IsValidLabelValue tests for a valid label value: empty, or at most 63
// characters of [-A-Za-z0-9_.] starting and ending with an alphanumeric.
func IsValidLabelValue(value string) []string {
	var errs []string
	if len(value) > LabelValueMaxLength {
		errs = append(errs, maxBytesError(LabelValueMaxLength))
	}
	if value != "" && !isQualifiedNamePart(value) {
		errs = append(errs, RegexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

const (
	cIdentifierFmt    = "[A-Za-z_][A-Za-z0-9_]*"
	cIdentifierErrMsg = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'"

	envVarNameFmt       = "[-._a-zA-Z][-._a-zA-Z0-9]*"
	envVarNameErrMsg    = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"
	relaxedEnvVarErrMsg = "a valid environment variable name must consist only of printable ASCII characters other than '='"

	configMapKeyFmt    = `[-._a-zA-Z0-9]+`
	configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"

	httpHeaderNameFmt    = "[-A-Za-z0-9]+"
	httpHeaderNameErrMsg = "a valid HTTP header must consist of alphanumeric characters or '-'"

	percentFmt    = "[0-9]+%"
	percentErrMsg = "a valid percent string must be a numeric string followed by an ending '%'"
)

var (
	cIdentifierRegexp    = regexp.MustCompile("^" + cIdentifierFmt + "$")
	envVarNameRegexp     = regexp.MustCompile("^" + envVarNameFmt + "$")
	configMapKeyRegexp   = regexp.MustCompile("^" + configMapKeyFmt + "$")
	httpHeaderNameRegexp = regexp.MustCompile("^" + httpHeaderNameFmt + "$")
	percentRegexp        = regexp.MustCompile("^" + percentFmt + "$")
)

// IsCIdentifier tests for a C identifier. It checks the format, not the length.
func IsCIdentifier(value string) []string {
	if !cIdentifierRegexp.MatchString(value) {
		return []string{RegexError(cIdentifierErrMsg, cIdentifierFmt, "my_name", "MY_NAME", "MyName")}
	}
	return nil
}

// IsEnvVarName tests for a valid environment variable name in Kubernetes'
// current (relaxed) rule: any non-empty run of printable ASCII except '='.
// This is the rule Kubernetes applies since RelaxedEnvironmentVariableValidation
// became the default.
func IsEnvVarName(value string) []string {
	var errs []string
	if value == "" {
		errs = append(errs, "environment variable name "+EmptyError())
	}
	for _, r := range value {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || r == '=' {
			errs = append(errs, relaxedEnvVarErrMsg)
			break
		}
	}
	return errs
}

// IsStrictEnvVarName tests for an environment variable name under the older,
// strict rule ([-._a-zA-Z][-._a-zA-Z0-9]*, and not '.', '..' or '..'-prefixed).
func IsStrictEnvVarName(value string) []string {
	var errs []string
	if !envVarNameRegexp.MatchString(value) {
		errs = append(errs, RegexError(envVarNameErrMsg, envVarNameFmt, "my.env-name", "MY_ENV.NAME", "MyEnvName1"))
	}
	return append(errs, hasChDirPrefix(value)...)
}

// IsConfigMapKey tests for a valid ConfigMap or Secret data key.
func IsConfigMapKey(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, MaxLenError(DNS1123SubdomainMaxLength))
	}
	if !configMapKeyRegexp.MatchString(value) {
		errs = append(errs, RegexError(configMapKeyErrMsg, configMapKeyFmt, "key.name", "KEY_NAME", "key-name"))
	}
	return append(errs, hasChDirPrefix(value)...)
}

// IsHTTPHeaderName tests for a header name Go's HTTP library accepts.
func IsHTTPHeaderName(value string) []string {
	if !httpHeaderNameRegexp.MatchString(value) {
		return []string{RegexError(httpHeaderNameErrMsg, httpHeaderNameFmt, "X-Header-Name")}
	}
	return nil
}

// IsValidPercent tests for a percentage string such as "25%".
func IsValidPercent(value string) []string {
	if !percentRegexp.MatchString(value) {
		return []string{RegexError(percentErrMsg, percentFmt, "1%", "93%")}
	}
	return nil
}

func hasChDirPrefix(value string) []string {
	switch {
	case value == ".":
		return []string{`must not be '.'`}
	case value == "..":
		return []string{`must not be '..'`}
	case strings.HasPrefix(value, ".."):
		return []string{`must not start with '..'`}
	}
	return nil
}

var (
	portNameCharsetRegexp   = regexp.MustCompile("^[-a-z0-9]+$")
	portNameOneLetterRegexp = regexp.MustCompile("[a-z]")
)

// IsValidPortName tests for an IANA_SVC_NAME: at most 15 characters of
// [-a-z0-9], at least one letter, no leading, trailing or doubled hyphen.
func IsValidPortName(port string) []string {
	var errs []string
	if len(port) > PortNameMaxLength {
		errs = append(errs, MaxLenError(PortNameMaxLength))
	}
	if !portNameCharsetRegexp.MatchString(port) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !portNameOneLetterRegexp.MatchString(port) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(port, "--") {
		errs = append(errs, "must not contain consecutive hyphens")
	}
	if len(port) > 0 && (port[0] == '-' || port[len(port)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	return errs
}

// IsValidPortNum tests for a non-zero port number (1-65535).
func IsValidPortNum(port int) []string {
	return IsInRange(port, 1, 65535)
}

// IsInRange tests that value lies in [lo, hi].
func IsInRange(value, lo, hi int) []string {
	if value >= lo && value <= hi {
		return nil
	}
	return []string{InclusiveRangeError(lo, hi)}
}

// IsValidUserID tests for a valid Unix UID (0 to 2^31-1, libcontainer's limit).
func IsValidUserID(uid int64) []string {
	if uid >= 0 && uid <= math.MaxInt32 {
		return nil
	}
	return []string{InclusiveRangeError(0, math.MaxInt32)}
}

// IsValidGroupID tests for a valid Unix GID (0 to 2^31-1).
func IsValidGroupID(gid int64) []string {
	if gid >= 0 && gid <= math.MaxInt32 {
		return nil
	}
	return []string{InclusiveRangeError(0, math.MaxInt32)}
}
