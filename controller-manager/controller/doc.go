// Package controller defines what every controller of the controller-manager
// receives (a shared client, informer factory, event recorder and logger) and
// the interface it implements to be started by name.
package controller
