// Command apiserver serves the minik8s API: Kubernetes paths and semantics,
// stored in embedded etcd (default) or an external etcd cluster.
package main

import (
	"os"

	"github.com/minik8s/minik8s/apiserver/app"
)

func main() { os.Exit(app.NewCommand().Main(os.Args[1:])) }
