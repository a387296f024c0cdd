// Package schedtest builds the Node and Pod objects the scheduler's tests
// and benchmark use: simulated nodes with allocatable resources and a Ready
// condition, and pending pods with requests.
package schedtest
