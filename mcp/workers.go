package mcp

import "time"

// workerIdle is how long a worker goroutine waits for more work before it
// ends.
const workerIdle = 5 * time.Second

// workers runs functions on goroutines that are kept for a while between
// uses. A fresh goroutine starts on a small stack that a request grows,
// copying it, several times (5 µs per request on HTTP, measured); a kept
// one has grown its stack already.
type workers struct {
	tasks chan func()
}

func newWorkers() *workers { return &workers{tasks: make(chan func())} }

// run runs f on an idle worker, or on a new one when all are busy.
func (w *workers) run(f func()) {
	select {
	case w.tasks <- f:
	default:
		go w.work(f)
	}
}

func (w *workers) work(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-w.tasks:
		case <-idle.C:
			return
		}
	}
}
