// Package encryption encrypts stored values at rest the way kube-apiserver's
// --encryption-provider-config does. It parses an EncryptionConfiguration
// (apiserver.config.k8s.io/v1), validates it with Kubernetes' messages, and
// turns it into one Transformer per resource.
//
// A Transformer holds an ordered list of providers (aescbc, aesgcm,
// secretbox, identity), each key of each provider a separate reader. The
// first key of the first provider writes; every configured key can read.
// Encrypted values carry Kubernetes' on-disk prefix,
// "k8s:enc:PROVIDER:v1:KEYNAME:", so data written by kube-apiserver and by
// minik8s with the same keys is interchangeable, and a reader knows which key
// to use without trying them all. identity writes plaintext and reads only
// values without a "k8s:enc:" prefix: listing it last keeps data written
// before encryption was turned on readable; listing it first turns
// encryption off for new writes while old encrypted values stay readable.
//
// The authenticatedData argument of both transform methods is bound into
// aesgcm ciphertexts (Kubernetes passes the etcd key), so a value copied to
// another key fails to decrypt. aescbc and secretbox ignore it, as in
// Kubernetes. Callers must pass the same bytes when reading as when writing.
package encryption
