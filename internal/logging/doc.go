// Package logging sets up the structured logger (log/slog) every minik8s
// daemon uses, from a level name, with the component attached once.
package logging
