package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
	"github.com/toolwire/toolwire/schema"
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
	// Observe, when set, is told as each server connects, is ready, or
	// fails (see Event). It must not block for long.
	Observe func(Event)
	// Tokens keeps the OAuth grants of the HTTP servers that ask for a
	// login; it is read only when a server does (a 401). Nil keeps them
	// in memory for the host's life; toolwire passes the user's store
	// (an oauth.UserStore: the OS keyring, or a file).
	Tokens oauth.Store
	// LoginCommand, when set, is how a user logs in to a server, with %s
	// for its name (toolwire's is "toolwire login %s"): a
	// LoginRequiredError names it.
	LoginCommand string
	// HideOutputSchemas leaves the servers' output schemas out of their
	// tools' Info (results are still checked against them). A gateway
	// that keeps large structured content behind handles sets it: an MCP
	// client rejects a result without the structured content a tool's
	// output schema promises.
	HideOutputSchemas bool
	// ServerNotify, when set, receives each server's notifications with
	// the server's name, after Client.Notify (a gateway relays list
	// changes with it). It must not block for long.
	ServerNotify func(server, method string, params json.RawMessage)
	// TaskStarted, when set, is told of each task (MCP's Tasks
	// extension, or a 2025-11-25 server's) a call became, by server name
	// and task id, so that it can be resumed (AwaitTask) after a restart.
	TaskStarted func(server, taskID string)

	mu        sync.Mutex
	servers   map[string]*server
	memTokens *oauth.MemoryStore
}

type server struct {
	host *Host
	cfg  *ServerConfig

	mu       sync.Mutex
	session  *mcp.ClientSession
	failures int
	retryAt  time.Time
	lastErr  error
	tools    []tool.Info
	sse      bool // the URL answered only as HTTP+SSE
	// clientOnce makes client, the HTTP client of an HTTP server that may
	// use OAuth (see httpClient).
	clientOnce sync.Once
	client     *http.Client
	// stale says the cached tools no longer hold; changed is signalled
	// (never blocking) when the server says its list changed. Neither
	// needs mu: the notification arrives on the connection's reader,
	// which mu's holder may be waiting for.
	stale   atomic.Bool
	changed chan struct{}
	// calls are the calls in progress whose callers hear the server's
	// progress and log messages (see passThrough).
	calls calls
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
	s := &server{host: h, cfg: cfg, changed: make(chan struct{}, 1)}
	s.stale.Store(true)
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
	case c.Transport != nil:
		return c.Transport
	case c.Command != "":
		env := make([]string, 0, len(c.Env))
		for k, v := range c.Env {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		return &mcp.CommandTransport{Command: c.Command, Args: c.Args, Env: env, Dir: c.Cwd, Stderr: s.host.Stderr}
	default:
		return s.httpTransport()
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
	nameHandlers(&c, s.cfg.Name)
	if f := s.host.TaskStarted; f != nil {
		c.TaskStarted = func(id string) { f(s.cfg.Name, id) }
	}
	userNotify := c.Notify
	c.Notify = func(method string, params json.RawMessage) {
		if method == mcp.NotificationToolsListChanged {
			s.stale.Store(true)
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
		s.passThrough(method, params)
		if userNotify != nil {
			userNotify(method, params)
		}
		if n := s.host.ServerNotify; n != nil {
			n(s.cfg.Name, method, params)
		}
	}
	sess, err := s.connect(ctx, &c)
	if err != nil {
		s.failures++
		s.retryAt = time.Now().Add(backoff(s.failures))
		s.lastErr = err
		return nil, err
	}
	s.session = sess
	s.stale.Store(true)
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
// errors are answers, and so is running out of time; so is the caller's
// asking its own client for input (mcp.ErrInputRequired: a gateway's
// 2026-07-28 client answers a server's question by making the call
// again).
func isTransportError(ctx context.Context, err error) bool {
	var rpcErr *jsonrpc.Error
	return err != nil && !errors.As(err, &rpcErr) && !errors.Is(err, mcp.ErrInputRequired) && ctx.Err() == nil
}

// listTools returns the server's tools, from cache unless a list_changed
// notification or a reconnection made it stale.
func (s *server) listTools(ctx context.Context) ([]tool.Info, error) {
	sess, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	if !s.stale.Load() && sess.ToolsFresh() {
		s.mu.Lock()
		tools := s.tools
		s.mu.Unlock()
		return tools, nil
	}
	s.stale.Store(false) // a list_changed from now on makes this listing stale
	tools, err := sess.ListTools(ctx)
	if err != nil {
		s.stale.Store(true)
		if isTransportError(ctx, err) {
			s.broken(sess, err)
		}
		if lerr := s.loginError(err); lerr != err {
			return nil, lerr
		}
		return nil, fmt.Errorf("server %q: tools/list: %w", s.cfg.Name, err)
	}
	tools = s.filter(tools)
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	return tools, nil
}

func (s *server) filter(tools []tool.Info) []tool.Info {
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

// Tools connects to the named servers, or to every server when none is
// named (concurrently), and returns their tools as
// tool.Tools named "server__tool" (or as the prefix option says; see
// RemoteTool for names that model providers reject). The list is a
// snapshot: Sync keeps a registry up to date instead. Servers
// that fail are reported in the error (a join of *ServerError) while the
// tools of the others are still returned. Two tools with one name are an
// error naming both servers. A name that is not a configured server is an
// error that lists the configured ones.
func (h *Host) Tools(ctx context.Context, servers ...string) ([]tool.Tool, error) {
	if len(servers) == 0 {
		return h.toolsOf(ctx, h.ServerNames())
	}
	if err := h.checkServers(servers); err != nil {
		return nil, err
	}
	return h.toolsOf(ctx, servers)
}

// toolsOf is Tools for the named servers.
func (h *Host) toolsOf(ctx context.Context, names []string) ([]tool.Tool, error) {
	type listing struct {
		srv   *server
		tools []tool.Info
	}
	results := make([]listing, len(names))
	failed := h.fanOut(names, func(i int, srv *server) error {
		results[i].srv = srv
		var err error
		results[i].tools, err = srv.listTools(ctx)
		return err
	})
	var out []tool.Tool
	var errs []error
	owner := map[string]string{}
	for i, r := range results {
		if failed[i] != nil {
			errs = append(errs, failed[i])
			continue
		}
		for _, rt := range r.srv.remoteTools(r.tools) {
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

// remoteTools makes tool.Tools of the server's tool definitions.
func (s *server) remoteTools(defs []tool.Info) []*RemoteTool {
	out := make([]*RemoteTool, len(defs))
	for i, d := range defs {
		out[i] = &RemoteTool{srv: s, def: d, name: tool.SafeName(s.cfg.ToolPrefix() + d.Name)}
	}
	return out
}

// RemoteTool is a tool of an MCP server, callable like any tool.Tool.
//
// Its name is "server__tool" (or as the server's prefix option says). A
// name that model providers would reject (MCP allows '.' and '/', and
// names longer than 64 characters) is mapped by tool.SafeName:
// "files.read/v2" becomes "files_read_v2_" and a six-digit hash;
// RemoteName gives the name on the server, which calls use.
type RemoteTool struct {
	srv  *server
	def  tool.Info
	name string

	once     sync.Once
	info     tool.Info
	output   *schema.Validator
	setupErr error
}

// setup works out, once, what the model sees of the tool and what the host
// fills: parameters named in the server's "inject" configuration, either
// at the top level (for every tool that has such a parameter) or under the
// tool's own name.
func (t *RemoteTool) setup() {
	t.once.Do(func() {
		t.info = t.def
		t.info.Name = t.name
		props, _ := schema.Properties(t.def.InputSchema) // a server's odd schema has none
		values := map[string]any{}
		for key, raw := range t.srv.cfg.Inject {
			if key == t.def.Name {
				var perTool map[string]any
				if err := json.Unmarshal(raw, &perTool); err != nil {
					t.setupErr = fmt.Errorf("config %s, server %q, inject.%s: want an object of parameter values: %w", t.srv.host.Config.Path, t.srv.cfg.Name, key, err)
					return
				}
				for k, v := range perTool {
					values[k] = v
				}
				continue
			}
			if slices.ContainsFunc(props, func(p schema.Property) bool { return p.Name == key }) {
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.setupErr = fmt.Errorf("config %s, server %q, inject.%s: %w", t.srv.host.Config.Path, t.srv.cfg.Name, key, err)
					return
				}
				if _, set := values[key]; !set {
					values[key] = v
				}
			}
		}
		var injected []string
		for k := range values {
			injected = append(injected, k)
		}
		sort.Strings(injected)
		if len(injected) > 0 {
			hidden, err := tool.HideParameters(t.def.InputSchema, injected)
			if err != nil {
				t.setupErr = fmt.Errorf("server %q, tool %s: %w", t.srv.cfg.Name, t.def.Name, err)
				return
			}
			t.info.InputSchema = hidden
			t.info.Injected, t.info.InjectedValues = injected, values
		}
		if len(t.def.OutputSchema) > 0 {
			if v, err := schema.Compile(t.def.OutputSchema); err == nil {
				t.output = v
			}
		}
		if t.srv.host.HideOutputSchemas {
			t.info.OutputSchema = nil
		}
	})
}

// Info describes the tool under its host-wide name, without the
// parameters the host injects, which it names in Injected with their
// configured values.
func (t *RemoteTool) Info() tool.Info {
	t.setup()
	return t.info
}

// Server names the server the tool lives on.
func (t *RemoteTool) Server() string { return t.srv.cfg.Name }

// RemoteName is the tool's name on its server.
func (t *RemoteTool) RemoteName() string { return t.def.Name }

// Call calls the tool on its server with the completed arguments. A server
// that died is restarted by the next call; this one fails with a fatal
// error (tool.ErrFatal) naming the server and its exit.
//
// When ctx carries a tool.Client (the call comes from an MCP client, or an
// agent), the server's progress about the call, and the log messages it
// sends while the call runs, reach that client; ending ctx cancels the
// call on the server.
func (t *RemoteTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	t.setup()
	if t.setupErr != nil {
		return nil, tool.Fatal(t.setupErr)
	}
	s := t.srv
	if d := time.Duration(s.cfg.Timeout); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	sess, err := s.connected(ctx)
	if err != nil {
		return nil, tool.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: t.def.Name, Arguments: args}
	if cl, ok := tool.ClientFrom(ctx); ok {
		// The caller listens: the server's log messages while the call
		// runs reach it, and its progress about the call if the caller
		// wants it (an MCP client that gave no progressToken does not;
		// and a token in _meta makes each request's _meta new to the
		// server).
		token := s.calls.add(ctx, cl)
		defer s.calls.remove(token)
		if req, ok := mcp.Request(ctx); !ok || req.WantsProgress {
			p.Meta = &mcp.RequestMeta{ProgressToken: token}
		}
	}
	res, err := sess.CallToolWith(ctx, p)
	if err != nil {
		err = s.loginError(err)
		if isTransportError(ctx, err) {
			// The server is gone: no model can repair that.
			s.broken(sess, err)
			return nil, tool.Fatal(fmt.Errorf("%s: %w", t.name, err))
		}
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	s.ok()
	out := res.ToolResult()
	if t.output != nil && !out.IsError {
		if err := t.checkOutput(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkOutput validates structured content against the tool's output
// schema: a result that breaks it is not passed on as if it were good.
func (t *RemoteTool) checkOutput(res *tool.Result) error {
	if res.StructuredContent == nil {
		return fmt.Errorf("server %q, tool %s: the result has no structuredContent although the tool declares an outputSchema", t.srv.cfg.Name, t.def.Name)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if err := t.output.Validate(v); err != nil {
		return fmt.Errorf("server %q, tool %s: the result does not match the tool's outputSchema: %w", t.srv.cfg.Name, t.def.Name, err)
	}
	return nil
}
