package main

import (
	"os"

	"github.com/minik8s/minik8s/kube-proxy/app"
)

func main() { os.Exit(app.NewCommand().Main(os.Args[1:])) }
