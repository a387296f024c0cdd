package warning

import (
	"context"
	"net/http"
	"sync"
	"testing"
)

func TestAdd(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	ctx := WithRecorder(context.Background(), h)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); Add(ctx, `say "hi" \ there`) }()
	}
	wg.Wait()
	Add(ctx, "second\nline")
	Add(context.Background(), "nowhere") // no recorder: nothing, no panic
	got := h.Values("Warning")
	want := []string{`299 - "say \"hi\" \\ there"`, `299 - "secondline"`}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Warning headers = %q, want %q", got, want)
	}
}
