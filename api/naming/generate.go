package naming

import "crypto/rand"

// GenerateName appends five random characters to base, as Kubernetes'
// SimpleNameGenerator does for generateName (and ServiceAccount admission
// for kube-api-access-XXXXX): consonants and digits that spell no words,
// base cut so the result stays a 63-character label.
func GenerateName(base string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return base + string(b)
}
