// Command controller-manager runs minik8s's reconcile loops (replicaset,
// deployment, node lifecycle, garbage collector, namespace, endpoints, job)
// as API clients, under leader election.
package main

import (
	"os"

	"github.com/minik8s/minik8s/controller-manager/app"
)

func main() { os.Exit(app.NewCommand().Main(os.Args[1:])) }
