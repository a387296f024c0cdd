package naming

import (
	"fmt"
	"strings"
)

// IsNegativeErrorMsg is Kubernetes' message for a negative count or size.
const IsNegativeErrorMsg = `must be greater than or equal to 0`

// ValidateNameFunc validates an object name. With prefix set, name is a
// generateName prefix, which may end in '-' because random characters follow.
type ValidateNameFunc func(name string, prefix bool) []string

// NameIsDNSSubdomain validates a name that must be a DNS subdomain (most kinds).
func NameIsDNSSubdomain(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return IsDNS1123Subdomain(name)
}

// NameIsDNSLabel validates a name that must be a DNS label (Namespace).
func NameIsDNSLabel(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return IsDNS1123Label(name)
}

// NameIsDNS1035Label validates a name that must be an RFC 1035 label (Service).
func NameIsDNS1035Label(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return IsDNS1035Label(name)
}

// ValidateNamespaceName validates a namespace name (a DNS label).
var ValidateNamespaceName ValidateNameFunc = NameIsDNSLabel

// ValidateServiceAccountName validates a service account name (a DNS subdomain).
var ValidateServiceAccountName ValidateNameFunc = NameIsDNSSubdomain

// maskTrailingDash replaces a trailing '-' of a generateName prefix so the
// prefix validates as the start of a name. Like Kubernetes it replaces the
// last two characters with "a", keeping the length within the limit check.
func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

// IsValidPathSegmentName tests that name can be one segment of a REST path
// or an etcd key: not "." or "..", and no '/' or '%'. It does not check for
// empty strings or length, as in Kubernetes.
func IsValidPathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{fmt.Sprintf(`may not be '%s'`, name)}
	}
	return IsValidPathSegmentPrefix(name)
}

// IsValidPathSegmentPrefix tests that name can start a path segment: no '/' or '%'.
func IsValidPathSegmentPrefix(name string) []string {
	var errs []string
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			errs = append(errs, fmt.Sprintf(`may not contain '%s'`, bad))
		}
	}
	return errs
}

// ValidatePathSegmentName is the ValidateNameFunc for kinds whose only name
// rule is being a safe path segment.
func ValidatePathSegmentName(name string, prefix bool) []string {
	if prefix {
		return IsValidPathSegmentPrefix(name)
	}
	return IsValidPathSegmentName(name)
}
