// Package protobuf speaks Kubernetes' protobuf wire format
// (application/vnd.kubernetes.protobuf) at the edge of the apiserver's HTTP
// layer, for every built-in kind it serves, without a codec of its own.
//
// The apiserver's types (package api) encode to exactly Kubernetes' JSON, and
// k8s.io/api ships generated, wire-exact protobuf marshalling for the same
// kinds. So a protobuf body is decoded into the k8s.io/api type its
// envelope names and handed on as that type's JSON (Decode), and a response
// in JSON is read into the k8s.io/api type its apiVersion and kind name and
// marshalled to protobuf (Encode, WatchEvent). Everything in between
// (admission, validation, storage, the watch cache) stays JSON.
//
// The envelope, lists and watch framing are k8s.io/apimachinery's own
// (runtime/serializer/protobuf) over a scheme built from k8s.io/api's
// AddToScheme for the groups served: an object is the magic "k8s\x00"
// followed by a runtime.Unknown carrying apiVersion, kind and the object's
// bytes; a watch stream is a sequence of frames, each a 4-byte big-endian
// length and a metav1.WatchEvent whose object is itself such an envelope.
// Status, the discovery documents, WatchEvent and the option kinds
// (DeleteOptions, ...) come with every group's registration, and
// meta.k8s.io/v1 (PartialObjectMetadata, Table) is registered too.
//
// A kind is encodable when its group is in the scheme (Registered); a
// served kind in a new group needs that group's AddToScheme in newScheme.
//
// Cost. The conversion is one JSON encode or decode of the k8s.io/api
// type per object in each direction, on top of the JSON the apiserver does
// anyway: about 10 µs to read a pod's protobuf body and 20 µs to write a
// created pod back, 10-15% of a create through HTTPS, authentication and
// RBAC (apiserver/integration's BenchmarkPodCreateProtobuf). Reads are
// where volume is, and there the watch cache's JSON is shared: one
// encoding per object version among every list, one line per event among
// every watcher. List and WatchEventLine remember what they made of such
// a slice for as long as its memory lives (shared.go), so an object or an
// event is converted once, not once per reader: a LIST of 10,000 pods in
// protobuf costs about what it costs in JSON, after the first.
package protobuf
