package defaults

import (
	"regexp"
	"strings"
)

// The grammar of image references (github.com/distribution/reference):
// [domain/]path[:tag][@digest], path components in lower case.
var (
	domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domainRE        = regexp.MustCompile(`^(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
	pathComponentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$`)
	tagRE           = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	digestRE        = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
)

// imageTag returns the tag of an image reference, "latest" when it has
// neither tag nor digest and "" when it has only a digest; ok is false when
// the reference does not parse.
func imageTag(image string) (tag string, ok bool) {
	name, digest, hasDigest := strings.Cut(image, "@")
	if hasDigest && !digestRE.MatchString(digest) {
		return "", false
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, tag = name[:i], name[i+1:]
		if !tagRE.MatchString(tag) {
			return "", false
		}
	}
	if name == "" || len(name) > 255 {
		return "", false
	}
	parts := strings.Split(name, "/")
	// The first component is a registry when it looks like a host.
	if first := parts[0]; len(parts) > 1 && (strings.ContainsAny(first, ".:[") || first == "localhost" || strings.ToLower(first) != first) {
		if !domainRE.MatchString(first) {
			return "", false
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if !pathComponentRE.MatchString(p) {
			return "", false
		}
	}
	if tag == "" && !hasDigest {
		tag = "latest"
	}
	return tag, true
}
