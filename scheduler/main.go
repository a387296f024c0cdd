// Command scheduler is minik8s's kube-scheduler: it watches pending pods
// and nodes, picks a node for each pod (filter, score) and records the
// choice with POST pods/NAME/binding, under leader election.
package main

import (
	"os"

	"github.com/minik8s/minik8s/scheduler/app"
)

func main() { os.Exit(app.NewCommand().Main(os.Args[1:])) }
