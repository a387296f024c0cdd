package runtime

import (
	"fmt"

	"github.com/distribution/reference"
)

// NormalizeImage turns a pod's image ("busybox", "127.0.0.1:5000/x") into
// the fully qualified reference runtimes store
// ("docker.io/library/busybox:latest").
func NormalizeImage(image string) (string, error) {
	named, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", fmt.Errorf("invalid image %q: %w", image, err)
	}
	return named.String(), nil
}

// ImageID is the imageID kube reports for a stored image: repository plus
// manifest digest.
func ImageID(ref, digest string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return digest
	}
	return named.Name() + "@" + digest
}

// IsLatest reports whether the image names a tag explicitly or implicitly
// latest ("busybox" and "busybox:latest" are latest, digests are not).
func IsLatest(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return false
	}
	if _, ok := named.(reference.Digested); ok {
		return false
	}
	if t, ok := named.(reference.Tagged); ok {
		return t.Tag() == "latest"
	}
	return true
}
