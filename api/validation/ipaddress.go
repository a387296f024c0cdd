package validation

import (
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// validateIPAddressName is kube's ValidateIPAddressName (IsValidIP): an
// IPAddress is named by the address it records, in canonical form.
func validateIPAddressName(name string, _ bool) []string {
	const invalid = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
	addr, err := netip.ParseAddr(name)
	switch {
	case err != nil && sloppyIPv4(name):
		// kube's sloppy parser reads it, the strict one does not.
		return []string{"must not have leading 0s"}
	case err != nil || addr.Zone() != "":
		return []string{invalid}
	case addr.Is4In6():
		return []string{"must not be an IPv4-mapped IPv6 address"}
	case addr.String() != name:
		return []string{fmt.Sprintf("must be in canonical form (%q)", addr.String())}
	}
	return nil
}

// sloppyIPv4 is four dot-separated decimal numbers up to 255, leading
// zeros allowed (what kube's ParseIPSloppy accepts as IPv4).
func sloppyIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || p == "" || strings.ContainsAny(p, "+-") || n > 255 {
			return false
		}
	}
	return true
}

// validateIPAddress is kube's ValidateIPAddress (networking.k8s.io/v1).
func validateIPAddress(o *api.IPAddress) field.ErrorList {
	errs := ValidateObjectMeta(&o.ObjectMeta, false, validateIPAddressName, field.NewPath("metadata"))
	return append(errs, validateIPAddressParentRef(o.Spec.ParentRef, field.NewPath("spec"))...)
}

// validateIPAddressUpdate: the parent reference is immutable.
func validateIPAddressUpdate(o, old *api.IPAddress) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&o.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	// kube reports the value as null (declarative validation's form).
	if !reflect.DeepEqual(o.Spec.ParentRef, old.Spec.ParentRef) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "parentRef"), (*string)(nil), fieldImmutableErrorMsg))
	}
	return errs
}

func validateIPAddressParentRef(ref *api.ParentReference, p *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(p.Child("parentRef"), "")}
	}
	p = p.Child("parentRef")
	var errs field.ErrorList
	// The core group (Services) is "": only a named group is checked.
	if ref.Group != "" {
		for _, msg := range naming.IsDNS1123Subdomain(ref.Group) {
			errs = append(errs, field.Invalid(p.Child("group"), ref.Group, msg))
		}
	}
	for _, f := range []struct {
		name, value string
		required    bool
	}{{"resource", ref.Resource, true}, {"name", ref.Name, true}, {"namespace", ref.Namespace, false}} {
		if f.value == "" {
			if f.required {
				errs = append(errs, field.Required(p.Child(f.name), ""))
			}
			continue
		}
		for _, msg := range naming.ValidatePathSegmentName(f.value, false) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	return errs
}
