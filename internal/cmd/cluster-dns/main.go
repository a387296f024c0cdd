// Command cluster-dns is the cluster's DNS server, run as a Deployment in
// kube-system behind the kube-dns Service (see internal/clusterdns).
package main

import (
	"os"

	"github.com/minik8s/minik8s/internal/clusterdns"
)

func main() { os.Exit(clusterdns.NewCommand().Main(os.Args[1:])) }
