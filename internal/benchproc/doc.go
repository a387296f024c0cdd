// Package benchproc runs the daemons of a benchmark as child processes of
// the program that measures them, and reads what /proc says about them:
// each process logs to a file in the run's directory and is killed with its
// parent (Pdeathsig); RSS, its high-water mark and CPU seconds come from
// /proc/PID/status and /proc/PID/stat. It serves bench-vs-kube and the
// cluster-scale run.
package benchproc
