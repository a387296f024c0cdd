// Package app wires the controller-manager: flags, the API client, the health
// and metrics server, leader election, and the controllers picked by
// --controllers, all sharing one informer factory.
package app
