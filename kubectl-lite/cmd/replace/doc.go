// Package replace implements "replace -f": each manifest object PUT over
// the live one (fields it leaves out are cleared; the version read just
// before guards against a concurrent change), or with --force deleted and
// created again, with --dry-run=client|server and -o.
package replace
