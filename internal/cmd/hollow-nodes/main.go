// Command hollow-nodes runs many hollow nodes (kubemark's hollow kubelets)
// in one process against an apiserver (see kubelet/hollow).
package main

import (
	"os"

	"github.com/minik8s/minik8s/kubelet/hollow"
)

func main() { os.Exit(hollow.NewCommand().Main(os.Args[1:])) }
