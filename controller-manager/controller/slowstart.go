package controller

import "sync"

// SlowStartBatch calls fn count times in batches of 1, 2, 4, ... (starting
// at initial), concurrently within a batch, stopping after the first batch
// with a failure, so a failing create (quota, admission) is not repeated
// hundreds of times. It returns the successful calls and the first error.
func SlowStartBatch(count, initial int, fn func() error) (int, error) {
	remaining, successes := count, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= batch
	}
	return successes, nil
}
