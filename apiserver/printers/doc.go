// Package printers is kube-apiserver's table printing: for every kind the
// server serves, the columns (name, type, format, description, priority)
// and the cells of one object, as pkg/printers/internalversion prints them
// — pod READY "1/2", STATUS reasons (CrashLoopBackOff, Init:0/1,
// Terminating), RESTARTS "3 (5m ago)", node roles, service ports, ages in
// apimachinery's HumanDuration. Kinds kube has no printer for get kube's
// default table: Name and Created At. The table of printers by kind is in
// printers.go; each printer is a variable beside the kinds of its group.
//
// It is the one copy of this logic: kubectl-lite asks the server for tables
// and only lays them out. Turning a response into a Table (includeObject,
// watch events) is the transform package's.
package printers
