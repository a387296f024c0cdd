// Package testimage builds a small OCI image from the host's static busybox
// (Debian's busybox-static), imports it into containerd, and serves it from a
// minimal read-only OCI distribution registry, so kubelet tests need no
// external registry. Only tests link it: the kubelet itself builds no image
// (a pause-container sandbox image is present in containerd or pulled).
package testimage
