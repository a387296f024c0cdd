package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	var in []io.Reader
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchsummary:", err)
			os.Exit(2)
		}
		defer f.Close()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = append(in, os.Stdin)
	}
	run, err := Parse(io.MultiReader(in...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(2)
	}
	run.Print(os.Stdout)
	if !run.OK() {
		os.Exit(1)
	}
}
