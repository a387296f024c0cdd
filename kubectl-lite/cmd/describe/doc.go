// Package describe implements "kubectl-lite describe": the objects are
// chosen as kubectl chooses them (TYPE NAME, TYPE/NAME, -f, -l, -A, and a
// NAME_PREFIX when no object has that exact name), a missing name is
// reported while the others are still described, events are shown for one
// object unless --show-events says otherwise, and each report is written
// by package describers.
package describe
