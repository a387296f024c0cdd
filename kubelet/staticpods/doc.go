// Package staticpods is the kubelet's file and HTTP pod sources, as kube's
// pkg/kubelet/config file and http sources. The file source reads the pods of --pod-manifest-path
// (staticPodPath), a directory of manifests (or one file), one Pod per
// file in YAML or JSON. Hidden files (a leading dot) and subdirectories
// are skipped. Each manifest is decoded, defaulted and validated as the
// apiserver would a created Pod, then given kube's static pod identity:
// name "<name>-<node>", namespace default when empty, spec.nodeName the
// node, a NoExecute toleration, and a UID that is a hash of the manifest,
// the node and the file (unless the manifest sets one), repeated in the
// kubernetes.io/config.hash annotation, with kubernetes.io/config.source
// "file" and kubernetes.io/config.seen. A pod that references API objects
// (service accounts, secrets, configmaps, claims) is refused, as kube
// refuses it: the node could not read them for a pod the API does not
// know.
//
// The source watches the path with inotify (golang.org/x/sys/unix; a
// path not made yet through its nearest existing parent) and lists it
// again every 20 seconds, as kube does, and hands the complete set of pods
// to its consumer after every change. A manifest that does not
// decode or validate is logged once (naming the file), reported through
// the optional Report hook (the kubelet records an Event on its Node) and
// left out; the other pods are unaffected.
//
// The URL source (URLSource, --manifest-url) fetches one v1 Pod or a v1
// PodList with the --manifest-url-header headers every period (kube's
// --http-check-frequency, 20 s) and gives its pods the same identity, with
// config.source "http" and a UID that hashes the URL instead of the node
// and file. A failed fetch or an answer that does not decode keeps the
// pods already read; an empty answer removes them.
package staticpods
