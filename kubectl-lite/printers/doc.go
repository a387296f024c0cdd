// Package printers renders objects the way kubectl does: the per-kind
// tables (with their -o wide columns), names, YAML and JSON. Tables read
// objects as decoded JSON maps so that any served kind prints.
package printers
