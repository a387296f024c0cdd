package naming

// Hand-written equivalents of the most used patterns (every object name,
// label key and value goes through them); naming_test checks them against
// the regular expressions, which still give the error messages.

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// isDNS1123Label matches dns1123LabelFmt.
func isDNS1123Label(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !isLowerAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isDNS1123Subdomain matches dns1123SubdomainFmt: labels joined by dots.
func isDNS1123Subdomain(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isDNS1123Label(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// isQualifiedNamePart matches qualifiedNameFmt (the name part of a
// qualified name, and a non-empty label value).
func isQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}
