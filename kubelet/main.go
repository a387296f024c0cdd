// Command kubelet is minik8s's node agent: it registers its Node, runs the
// pods bound to it in containerd (kubelet/runtime/containerd) with CNI
// networking, reports their status, and serves their logs and exec over
// HTTPS. kubelet/app wires it.
package main

import (
	"os"

	"github.com/minik8s/minik8s/kubelet/app"
)

func main() { os.Exit(app.NewCommand().Main(os.Args[1:])) }
