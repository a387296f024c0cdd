// Package printers renders objects the way kubectl does: the tables the
// server sends (decorated with namespaces, labels and kinds, laid out with
// kubectl's tab writer), names, YAML, JSON, jsonpath and custom columns.
// What a kind's table holds is the server's (apiserver/printers): kubectl-lite
// asks for tables as kubectl does.
package printers
