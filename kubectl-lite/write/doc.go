// Package write sends what the verbs that write objects (apply, create,
// replace, diff, run, expose) make of them, and reports it as kubectl
// does. A Writer POSTs, PATCHes and PUTs under the --dry-run strategy
// (nothing sent for a client dry run, ?dryRun=All for a server one) and
// keeps the server's answer for -o; Flags.Each runs a verb over every -f
// object, goes on after a failure and prints "kind.group/name RESULT" or
// the object; a Generator creates the one object a command built from its
// flags ("create namespace", "run", "expose").
package write
