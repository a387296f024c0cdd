// Package applyobject is "kubectl apply" of one manifest object. Client
// side: the object is created when missing, else the live object is
// patched with a three-way merge of the last-applied-configuration
// annotation, the manifest and the live object (strategic for the kinds
// kubectl knows, a JSON merge patch for custom resources), and the result
// is worded "created", "configured" or "unchanged" with the dry-run
// suffix. Server side: the object is sent whole as an apply patch, and a
// conflict is explained as kubectl explains it. "kubectl-lite apply" uses
// both; "kubectl-lite diff" computes its MERGED side with the client-side
// apply under a server dry run.
package applyobject
