package mcp

import "time"

// workerIdle is how long a worker goroutine waits for more work before it
// ends.
const workerIdle = 5 * time.Second

// task is work for a worker.
type task interface{ run() }

// workers runs tasks on goroutines that are kept for a while between
// uses. A fresh goroutine starts on a small stack that a request grows,
// copying it, several times (5 µs per request on HTTP, measured); a kept
// one has grown its stack already.
type workers struct {
	tasks chan task
}

func newWorkers() *workers { return &workers{tasks: make(chan task)} }

// run runs t on an idle worker, or on a new one when all are busy.
func (w *workers) run(t task) {
	select {
	case w.tasks <- t:
	default:
		go w.work(t)
	}
}

func (w *workers) work(t task) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		t.run()
		idle.Reset(workerIdle)
		select {
		case t = <-w.tasks:
		case <-idle.C:
			return
		}
	}
}
