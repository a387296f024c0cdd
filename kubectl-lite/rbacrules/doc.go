// Package rbacrules lays out RBAC policy rules as kubectl shows them (in
// describe role and auth can-i --list): each rule broken down to one
// group, resource, verb and name, the single-resource ones merged back,
// and the result sorted by rbac/v1 PolicyRule's String().
package rbacrules
