package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// progressRecorder is a tool.Client that keeps the progress messages.
type progressRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressRecorder) Progress(_ context.Context, _, _ float64, m string) error {
	p.mu.Lock()
	p.msgs = append(p.msgs, m)
	p.mu.Unlock()
	return nil
}

// saw waits up to 10 s for a progress message holding m.
func (p *progressRecorder) saw(m string) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		p.mu.Lock()
		got := strings.Join(p.msgs, "|")
		p.mu.Unlock()
		if strings.Contains(got, m) {
			return true
		}
	}
	return false
}

func (*progressRecorder) Log(context.Context, tool.LogLevel, string, any) error { return nil }
func (*progressRecorder) Elicit(context.Context, *tool.Elicitation) (*tool.ElicitResult, error) {
	return nil, errors.ErrUnsupported
}
func (*progressRecorder) Sample(context.Context, *tool.Sampling) (*tool.SamplingResult, error) {
	return nil, errors.ErrUnsupported
}

func connectTasks(t *testing.T, srv *mcp.Server, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	sess, err := c.Connect(context.Background(), &mcp.InMemoryTransport{Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// CallTool follows a task to its result, in memory and over HTTP: it
// shows its status as progress and answers its questions with the
// client's elicitation handler.
func TestClientFollowsTask(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			rec := &progressRecorder{}
			srv := newTaskServer(t, mcp.TaskOptions{PollInterval: 20 * time.Millisecond}, taskTool("ask", tool.TaskRequired, func(ctx context.Context) (*tool.Result, error) {
				mcp.StartTask(ctx)
				_ = tool.Progress(ctx, 1, 2, "halfway")
				rec.saw("halfway") // the status stays until a poll has shown it
				res, err := tool.Elicit(ctx, &tool.Elicitation{Message: "name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
				if err != nil {
					return nil, err
				}
				return tool.Text(fmt.Sprint("hello ", res.Content["name"])), nil
			}))
			asked := 0
			c := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"},
				Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				}}
			var sess *mcp.ClientSession
			if transport == "memory" {
				sess = connectTasks(t, srv, c)
			} else {
				var err error
				if sess, err = c.Connect(context.Background(), &mcp.HTTPTransport{URL: startHTTP(t, srv).url}); err != nil {
					t.Fatal(err)
				}
				defer sess.Close()
			}
			res, err := sess.CallTool(tool.WithClient(context.Background(), rec), "ask", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Content[0].Text != "hello Ada" || asked != 1 {
				t.Errorf("result %+v, asked %d times", res, asked)
			}
			if got := strings.Join(rec.msgs, "|"); !strings.Contains(got, "halfway") {
				t.Errorf("progress shown: %q", got)
			}
		})
	}
}

// A task's protocol error comes back as the call's error; a tool error as
// a result with isError.
func TestClientTaskOutcomes(t *testing.T) {
	srv := newTaskServer(t, mcp.TaskOptions{PollInterval: 20 * time.Millisecond},
		taskTool("fatal", tool.TaskRequired, func(context.Context) (*tool.Result, error) { return nil, tool.Fatal(errors.New("broken")) }),
		taskTool("toolerr", tool.TaskRequired, func(context.Context) (*tool.Result, error) { return nil, errors.New("bad input") }))
	sess := connectTasks(t, srv, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}})
	if _, err := sess.CallTool(context.Background(), "fatal", nil); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("protocol error: %v", err)
	}
	res, err := sess.CallTool(context.Background(), "toolerr", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "bad input") {
		t.Errorf("tool error: %+v, %v", res, err)
	}
}

// When the call's context ends, the client cancels the task on the
// server.
func TestClientCancelsTask(t *testing.T) {
	ended := make(chan error, 1)
	srv := newTaskServer(t, mcp.TaskOptions{PollInterval: 20 * time.Millisecond}, taskTool("long", tool.TaskRequired, func(ctx context.Context) (*tool.Result, error) {
		mcp.StartTask(ctx)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	}))
	sess := connectTasks(t, srv, &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := sess.CallTool(ctx, "long", nil); err == nil || !strings.Contains(err.Error(), "cancelled on the server") {
		t.Errorf("call: %v", err)
	}
	select {
	case err := <-ended:
		if !strings.Contains(err.Error(), "cancelled by the client") {
			t.Errorf("the tool's context ended with %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the task was not cancelled on the server")
	}
}

// A task's id, kept through Client.TaskStarted, lets another client (the
// program after a restart) follow the task to its result.
func TestClientResumesTask(t *testing.T) {
	release := make(chan struct{})
	srv := newTaskServer(t, mcp.TaskOptions{PollInterval: 20 * time.Millisecond}, waitTool("job", tool.TaskRequired, release))
	hc := startHTTP(t, srv)
	ids := make(chan string, 1)
	first := &mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}, TaskStarted: func(id string) { ids <- id }}
	ctx := context.Background()
	sa, err := first.Connect(ctx, &mcp.HTTPTransport{URL: hc.url})
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	go sa.CallTool(ctx, "job", nil) // the first run, left behind
	var id string
	select {
	case id = <-ids:
	case <-time.After(waitTimeout):
		t.Fatal("TaskStarted was not called")
	}
	sb, err := (&mcp.Client{Info: mcp.Implementation{Name: "t", Version: "1"}}).Connect(ctx, &mcp.HTTPTransport{URL: hc.url})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	close(release)
	res, err := sb.AwaitTask(ctx, id)
	if err != nil || res.Content[0].Text != "done job" {
		t.Fatalf("resumed: %+v, %v", res, err)
	}
	if _, err := sb.AwaitTask(ctx, "task_AAAAAAAAAAAAAAAAAAAAAA"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown task: %v", err)
	}
}
