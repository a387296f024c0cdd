// Package manifest reads the objects of -f arguments: files, directories
// (their .yaml, .yml and .json files, -R for subdirectories) and stdin, each
// with many YAML documents or JSON objects, "kind: List" expanded.
package manifest
