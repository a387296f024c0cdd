// Package manifest reads the objects of -f arguments: files, directories
// (their .yaml, .yml and .json files, -R for subdirectories), URLs and
// stdin, each with many YAML documents or JSON objects, "kind: List"
// expanded. Files is the -f/-R flag pair every verb that takes manifests
// binds; its Objects places them in the namespace of -n or the context,
// and its Refs names the live objects they stand for. WithLastApplied
// records a manifest in its own last-applied annotation, as apply and
// create --save-config send it.
package manifest
