// Command metrics-server serves the metrics.k8s.io API from the kubelets'
// resource metrics, as an add-on behind an APIService (see
// internal/metricsserver).
package main

import (
	"os"

	"github.com/minik8s/minik8s/internal/metricsserver"
)

func main() { os.Exit(metricsserver.NewCommand().Main(os.Args[1:])) }
