// Command kubelet is a minik8s component that is not built yet: it exits with a
// clear error until its issue lands.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "kubelet: not implemented yet")
	os.Exit(1)
}
