package controller

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/minik8s/minik8s/api"
)

// safeAlphabet is kube's rand.SafeEncodeString alphabet: no vowels (no
// words) and no characters that look alike.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// SafeEncodeString maps every byte of s into safeAlphabet.
func SafeEncodeString(s string) string {
	r := make([]byte, len(s))
	for i, b := range []byte(s) {
		r[i] = safeAlphabet[int(b)%len(safeAlphabet)]
	}
	return string(r)
}

// ComputeHash is the pod-template-hash of a template: FNV-32a of its JSON
// encoding, then the collision count (little-endian, as kube), rendered as
// decimal and safe-encoded. The JSON stands in for kube's DeepHashObject,
// so values differ from kube's, but it is stable for one template.
func ComputeHash(template *api.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	b, _ := json.Marshal(template) // a PodTemplateSpec always encodes
	h.Write(b)
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		h.Write(buf)
	}
	return SafeEncodeString(fmt.Sprint(h.Sum32()))
}
