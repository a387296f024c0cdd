// Package apiresources implements "kubectl-lite api-resources": the table
// of the kinds the server serves, with their short names.
package apiresources
