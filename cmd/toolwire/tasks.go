package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// taskEntry is a task a toolwire call was answered with (MCP's Tasks
// extension), kept until the call returns, so that toolwire tasks can
// resume it when toolwire was killed first.
type taskEntry struct {
	Config  string    `json:"config"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool"` // its full name, server__tool
	Task    string    `json:"task"`
	Started time.Time `json:"started"`
}

// maxTaskEntries bounds the tasks kept: the oldest go first (a server
// keeps a task's result for a limited time anyway).
const maxTaskEntries = 100

// taskLog is the file of the kept tasks, in the user's cache directory.
type taskLog struct {
	path string
	mu   sync.Mutex
}

func newTaskLog() *taskLog {
	l := &taskLog{}
	if dir, err := os.UserCacheDir(); err == nil {
		l.path = filepath.Join(dir, "toolwire", "tasks.json")
	}
	return l
}

func (l *taskLog) read() []taskEntry {
	var out []taskEntry
	if b, err := os.ReadFile(l.path); err == nil {
		_ = json.Unmarshal(b, &out) // a damaged file is an empty one
	}
	return out
}

func (l *taskLog) write(entries []taskEntry) error {
	if len(entries) > maxTaskEntries {
		entries = entries[len(entries)-maxTaskEntries:]
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(l.path, b, 0o600)
}

// add keeps a task.
func (l *taskLog) add(e taskEntry) {
	if l.path == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.write(append(l.read(), e))
}

// remove forgets a task.
func (l *taskLog) remove(id string) {
	if l.path == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	entries := l.read()
	kept := entries[:0]
	for _, e := range entries {
		if e.Task != id {
			kept = append(kept, e)
		}
	}
	if len(kept) != len(entries) {
		_ = l.write(kept)
	}
}

func newTasksCmd(g *globalOptions) *cobra.Command {
	o := hostOptions{g: g}
	cmd := &cobra.Command{
		Use:   "tasks [resume TASK_ID]",
		Short: "List the tasks toolwire call left running, or resume one",
		Long: `A tool call that a server runs as a task (MCP's Tasks extension) is
followed by toolwire call to its result; if toolwire was killed first, the
task runs on and its id is kept. toolwire tasks lists those tasks;
toolwire tasks resume TASK_ID follows one to its result, printed as
toolwire call prints it. A server keeps a task's result for a limited time
(an hour, by default, for toolwire's servers), for the caller that started
it only.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || (len(args) == 2 && args[0] == "resume") {
				return nil
			}
			return &usageError{cmd: cmd, err: fmt.Errorf("want no arguments, or resume TASK_ID")}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			log := newTaskLog()
			if len(args) == 0 {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TASK\tTOOL\tSTARTED")
				for _, e := range log.read() {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Task, e.Tool, e.Started.Local().Format(time.DateTime))
				}
				return tw.Flush()
			}
			var entry *taskEntry
			for _, e := range log.read() {
				if e.Task == args[1] {
					entry = &e
				}
			}
			if entry == nil {
				return fmt.Errorf("no task %q was left running by toolwire call: see toolwire tasks", args[1])
			}
			if o.config == "" {
				o.config = entry.Config
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer s.close()
			done := s.progress.task("task "+entry.Task, "running")
			res, err := s.Host.AwaitTask(s.ctx, entry.Server, entry.Task)
			done()
			s.progress.close()
			if err != nil {
				if s.ctx.Err() == nil {
					log.remove(entry.Task) // ended, expired or unknown: nothing more to get
				}
				return fmt.Errorf("task %s of %s: %w", entry.Task, entry.Tool, err)
			}
			log.remove(entry.Task)
			return printResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), res)
		},
	}
	o.flags(cmd)
	return cmd
}

// keepTasks makes the host keep in log each task a call of the tool
// (its full name) becomes, until the call returns (forget).
func keepTasks(s *session, log *taskLog, config, toolName string) (forget func()) {
	var mu sync.Mutex
	var ids []string
	s.Host.TaskStarted = func(server, id string) {
		log.add(taskEntry{Config: config, Server: server, Tool: toolName, Task: id, Started: time.Now()})
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			log.remove(id)
		}
	}
}
