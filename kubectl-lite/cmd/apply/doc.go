// Package apply implements "apply -f": each manifest object is created
// when missing, else patched with a three-way strategic merge of the
// last-applied-configuration annotation, the manifest and the live object,
// with --dry-run=client|server and -o; with --server-side the object is sent
// whole as a server-side apply (ServerSide) under the "kubectl" field
// manager. One, the client-side apply of one object, is also what diff
// computes its MERGED side with.
package apply
