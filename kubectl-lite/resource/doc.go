// Package resource turns a command's arguments into the objects it acts on:
// "TYPE NAME...", "TYPE/NAME..." and "TYPE -l SELECTOR | --all", resolved
// with kubectl's short names and error messages.
package resource
