package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// Host holds the connections to the configured MCP servers. Servers are
// connected on first use; a stdio server that dies is restarted on the next
// call, with backoff after repeated failures.
type Host struct {
	Config *Config
	// Client is the template for each connection: its Info and handlers
	// (sampling, elicitation, roots, notifications).
	Client mcp.Client
	// Stderr receives the stdio servers' stderr, when set.
	Stderr io.Writer

	mu      sync.Mutex
	servers map[string]*server
}

// New returns a host for a configuration.
func New(cfg *Config) *Host { return &Host{Config: cfg} }

type server struct {
	host *Host
	cfg  *ServerConfig

	mu       sync.Mutex
	session  *mcp.ClientSession
	failures int
	retryAt  time.Time
	lastErr  error
	tools    []mcp.Tool
	stale    bool
}

func (h *Host) server(name string) (*server, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.servers == nil {
		h.servers = map[string]*server{}
	}
	if s, ok := h.servers[name]; ok {
		return s, nil
	}
	cfg, ok := h.Config.Servers[name]
	if !ok {
		return nil, fmt.Errorf("no server named %q in %s (servers: %s)", name, h.Config.Path, strings.Join(h.ServerNames(), ", "))
	}
	s := &server{host: h, cfg: cfg, stale: true}
	h.servers[name] = s
	return s, nil
}

// ServerNames returns the configured server names, sorted.
func (h *Host) ServerNames() []string {
	names := make([]string, 0, len(h.Config.Servers))
	for n := range h.Config.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *server) transport() mcp.ClientTransport {
	c := s.cfg
	switch {
	case c.Command != "":
		env := make([]string, 0, len(c.Env))
		for k, v := range c.Env {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		return &mcp.CommandTransport{Command: c.Command, Args: c.Args, Env: env, Dir: c.Cwd, Stderr: s.host.Stderr}
	default:
		return s.host.httpTransport(c)
	}
}

// backoff is the wait before reconnecting after n consecutive failures.
func backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := 250 * time.Millisecond << min(n-2, 6)
	return min(d, 15*time.Second)
}

// connected returns the server's session, connecting (or reconnecting) as
// needed.
func (s *server) connected(ctx context.Context) (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		return s.session, nil
	}
	if wait := time.Until(s.retryAt); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("server %q: waiting to reconnect after %v: %w", s.cfg.Name, s.lastErr, ctx.Err())
		}
	}
	c := s.host.Client
	userNotify := c.Notify
	c.Notify = func(method string, params json.RawMessage) {
		if method == mcp.NotificationToolsListChanged {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
		}
		if userNotify != nil {
			userNotify(method, params)
		}
	}
	sess, err := c.Connect(ctx, s.transport())
	if err != nil {
		s.failures++
		s.retryAt = time.Now().Add(backoff(s.failures))
		s.lastErr = err
		return nil, fmt.Errorf("server %q: %w", s.cfg.Name, err)
	}
	s.session, s.stale = sess, true
	return sess, nil
}

// broken drops a session after a transport failure, so the next call
// reconnects (restarting a stdio server).
func (s *server) broken(sess *mcp.ClientSession, err error) {
	s.mu.Lock()
	if s.session == sess {
		s.session = nil
		s.failures++
		s.retryAt = time.Now().Add(backoff(s.failures))
		s.lastErr = err
	}
	s.mu.Unlock()
	go sess.Close()
}

func (s *server) ok() {
	s.mu.Lock()
	s.failures = 0
	s.mu.Unlock()
}

// isTransportError tells a failed connection from an answer: JSON-RPC
// errors are answers, and so is running out of time.
func isTransportError(ctx context.Context, err error) bool {
	var rpcErr *jsonrpc.Error
	return err != nil && !errors.As(err, &rpcErr) && ctx.Err() == nil
}

// listTools returns the server's tools, from cache unless a list_changed
// notification or a reconnection made it stale.
func (s *server) listTools(ctx context.Context) ([]mcp.Tool, error) {
	sess, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if !s.stale {
		tools := s.tools
		s.mu.Unlock()
		return tools, nil
	}
	s.mu.Unlock()
	tools, err := sess.ListTools(ctx)
	if err != nil {
		if isTransportError(ctx, err) {
			s.broken(sess, err)
		}
		return nil, fmt.Errorf("server %q: tools/list: %w", s.cfg.Name, err)
	}
	tools = s.filter(tools)
	s.mu.Lock()
	s.tools, s.stale = tools, false
	s.mu.Unlock()
	return tools, nil
}

func (s *server) filter(tools []mcp.Tool) []mcp.Tool {
	in := setOf(s.cfg.Include)
	ex := setOf(s.cfg.Exclude)
	out := tools[:0:0]
	for _, t := range tools {
		if (len(in) > 0 && !in[t.Name]) || ex[t.Name] {
			continue
		}
		out = append(out, t)
	}
	return out
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// ServerError is one server's failure while listing tools.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return e.Err.Error() }
func (e *ServerError) Unwrap() error { return e.Err }

// Tools connects to every server (concurrently) and returns their tools as
// tool.Tools named "server__tool" (or as the prefix option says). Servers
// that fail are reported in the error (a join of *ServerError) while the
// tools of the others are still returned. Two tools with one name are an
// error naming both servers.
func (h *Host) Tools(ctx context.Context) ([]tool.Tool, error) {
	names := h.ServerNames()
	type listing struct {
		srv   *server
		tools []mcp.Tool
		err   error
	}
	results := make([]listing, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		srv, err := h.server(n)
		if err != nil {
			results[i].err = err
			continue
		}
		results[i].srv = srv
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].tools, results[i].err = srv.listTools(ctx)
		}()
	}
	wg.Wait()
	var out []tool.Tool
	var errs []error
	owner := map[string]string{}
	for i, r := range results {
		if r.err != nil {
			errs = append(errs, &ServerError{Server: names[i], Err: r.err})
			continue
		}
		for _, t := range r.tools {
			rt := &RemoteTool{srv: r.srv, def: t, name: r.srv.cfg.ToolPrefix() + t.Name}
			if prev, dup := owner[rt.name]; dup {
				errs = append(errs, fmt.Errorf("tool name %q is given by both server %q and server %q: set a \"prefix\" for one of them in %s", rt.name, prev, names[i], h.Config.Path))
				continue
			}
			owner[rt.name] = names[i]
			out = append(out, rt)
		}
	}
	return out, errors.Join(errs...)
}

// Close ends every connection, stopping the stdio servers.
func (h *Host) Close() error {
	h.mu.Lock()
	servers := h.servers
	h.servers = nil
	h.mu.Unlock()
	var errs []error
	for _, s := range servers {
		s.mu.Lock()
		sess := s.session
		s.session = nil
		s.mu.Unlock()
		if sess != nil {
			errs = append(errs, sess.Close())
		}
	}
	return errors.Join(errs...)
}

// RemoteTool is a tool of an MCP server, callable like any tool.Tool.
type RemoteTool struct {
	srv  *server
	def  mcp.Tool
	name string
}

// Info describes the tool under its host-wide name.
func (t *RemoteTool) Info() tool.Info {
	i := t.def
	i.Name = t.name
	return i
}

// Server names the server the tool lives on.
func (t *RemoteTool) Server() string { return t.srv.cfg.Name }

// RemoteName is the tool's name on its server.
func (t *RemoteTool) RemoteName() string { return t.def.Name }

// Call calls the tool on its server. A server that died is restarted by the
// next call; this one fails with an error naming the server and its exit.
func (t *RemoteTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	s := t.srv
	if d := time.Duration(s.cfg.Timeout); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	sess, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sess.CallTool(ctx, t.def.Name, args)
	if err != nil {
		if isTransportError(ctx, err) {
			s.broken(sess, err)
		}
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	s.ok()
	return res.ToolResult(), nil
}
