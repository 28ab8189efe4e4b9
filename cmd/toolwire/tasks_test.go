package main

import (
	"fmt"
	"testing"
	"time"
)

// The tasks toolwire call leaves running are kept in the user's cache
// directory until the call returns, at most maxTaskEntries of them.
func TestTaskLog(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	log := newTaskLog()
	for i := range maxTaskEntries + 5 {
		log.add(taskEntry{Server: "s", Tool: "s__t", Task: fmt.Sprint("task_", i), Started: time.Now()})
	}
	got := log.read()
	if len(got) != maxTaskEntries || got[0].Task != "task_5" || got[len(got)-1].Task != fmt.Sprint("task_", maxTaskEntries+4) {
		t.Fatalf("%d entries kept, from %s", len(got), got[0].Task)
	}
	log.remove("task_7")
	for _, e := range log.read() {
		if e.Task == "task_7" {
			t.Errorf("task_7 was not forgotten")
		}
	}
	if n := len(log.read()); n != maxTaskEntries-1 {
		t.Errorf("%d entries after removing one", n)
	}
}
