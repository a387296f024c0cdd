// Command ingress-controller is minik8s' built-in ingress controller: it
// serves the Ingresses of its IngressClass over HTTP and HTTPS (see
// internal/ingress).
package main

import (
	"os"

	"github.com/minik8s/minik8s/internal/ingress"
)

func main() { os.Exit(ingress.NewCommand().Main(os.Args[1:])) }
