// Package run implements "run NAME --image=IMAGE": a Pod of one container
// built from flags as kubectl run builds it (labels run=NAME unless -l,
// the arguments after -- as args or, with --command, the command),
// created or, with --dry-run=client, only printed.
package run
