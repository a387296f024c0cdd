package cacher

// SetBeforeDirectHook sets the hook a watcher's goroutine calls before it
// takes its lock to go direct; the returned function removes it.
func SetBeforeDirectHook(f func(*Watcher)) (restore func()) {
	testHookBeforeDirect.Store(&f)
	return func() { testHookBeforeDirect.Store(nil) }
}
