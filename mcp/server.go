package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// Defaults for the Server's limits.
const (
	DefaultMaxConcurrentRequests = 64
	DefaultMaxQueuedRequests     = 256
	DefaultRequestTimeout        = 10 * time.Minute
	DefaultPageSize              = 500
	// DefaultMaxStreams bounds the SSE streams held open between
	// requests: an idle one costs about 30 KiB of the server's memory
	// (RSS of toolwire serve --http with 2,000 HTTP+SSE streams open,
	// two goroutines each; bench/README.md), so the default cap holds
	// about 60 MiB.
	DefaultMaxStreams = 2_000
	// DefaultStreamIdleTimeout closes an SSE stream held open between
	// requests that carried nothing this long.
	DefaultStreamIdleTimeout = 10 * time.Minute
)

// ResourceHandler reads a resource. It returns the contents of uri, or an
// error; return ErrResourceNotFound (wrapped or not) for an unknown URI.
type ResourceHandler func(ctx context.Context, uri string) ([]ResourceContents, error)

// PromptHandler renders a prompt with its arguments.
type PromptHandler func(ctx context.Context, args map[string]string) (*GetPromptResult, error)

// CompletionHandler suggests values for an argument of a prompt or resource
// template.
type CompletionHandler func(ctx context.Context, p *CompleteParams) (*Completion, error)

// ErrResourceNotFound is returned by a ResourceHandler for an unknown URI.
var ErrResourceNotFound = fmt.Errorf("resource not found")

// Server serves tools, resources and prompts over MCP to any number of
// clients at once, in both protocol eras. Set its fields before serving; add
// tools, resources and prompts at any time (clients that asked to be told
// get a list_changed notification). The zero value serves nothing under an
// empty name; set Info.
type Server struct {
	// Info identifies the server to clients.
	Info Implementation
	// Instructions tell a model how to use the server's tools.
	Instructions string

	// MaxMessageSize is the largest message accepted, in bytes (default
	// jsonrpc.DefaultMaxMessageSize). A larger one is refused with an error
	// and the connection stays up.
	MaxMessageSize int
	// MaxConcurrentRequests bounds the requests one connection runs at once
	// (default DefaultMaxConcurrentRequests); further requests wait.
	// ping and initialize take no slot: they are answered at once
	// whatever runs, and a cancellation reaches a waiting request too.
	MaxConcurrentRequests int
	// MaxQueuedRequests bounds the requests one connection holds waiting
	// for a slot (default DefaultMaxQueuedRequests); one more is refused
	// at once with an error that says the server is busy and to retry.
	MaxQueuedRequests int
	// RequestTimeout bounds each request (default DefaultRequestTimeout).
	// A request that runs out of time gets an error at once; its handler's
	// context is cancelled.
	RequestTimeout time.Duration
	// PageSize is the number of items per page of a list (default
	// DefaultPageSize).
	PageSize int
	// ListTTL is the ttlMs given to modern clients on cacheable results
	// (default 0: always re-fetch, since lists may change).
	ListTTL time.Duration
	// StateKey signs the requestState of multi round-trip requests, so that
	// state a client sends back cannot be forged. With several server
	// instances behind a load balancer, give them the same key. When empty,
	// a random key is made on first use.
	StateKey []byte
	// Logger receives the server's own diagnostics (never sent to clients).
	// Nil discards them.
	Logger *slog.Logger
	// Caller, when set, names the caller of each tools/call (what
	// tool.CallerFrom returns to the tool and the registry's middleware),
	// as net/http's ConnContext lets a program shape a connection's
	// context. It gets the request's context, which for HTTP derives from
	// the *http.Request's (so what the program's own HTTP middleware
	// stored there, an authenticated user, is at hand), and what is known
	// of the request, whose Caller is the default.
	//
	// The default caller is the legacy session or stdio connection
	// ("session:…"), else, for a 2026-07-28 HTTP request, a digest of its
	// Authorization header ("token:…"), else anonymous; a caller that the
	// context the server runs in already carries (tool.WithCaller, as
	// bearer.Auth's middleware sets the user of a verified token) comes
	// first. A legacy HTTP session is bound to the caller that opened it:
	// a request carrying another caller finds no such session.
	Caller func(ctx context.Context, req RequestInfo) tool.Caller
	// Inject, when set, gives the values of the parameters tools take
	// from the host (struct fields tagged `tool:"inject"`, Info.Injected)
	// for each tools/call, by parameter name, as tool.WithInjected would
	// (they take precedence over a tool's InjectedValues). Clients never
	// see these parameters, and a value a client sends for one is
	// dropped. It gets the request's context (for HTTP derived from the
	// *http.Request's, so what the program's HTTP middleware stored there
	// is at hand; over stdio, the context ServeStdio was given) and what
	// is known of the request, its Caller decided. An error fails the
	// call with a protocol error carrying its text (a *jsonrpc.Error as
	// it is), and the tool does not run.
	Inject func(ctx context.Context, req RequestInfo) (map[string]any, error)
	// MaxStreams bounds the SSE streams held open between requests, over
	// every HTTP handler serving this server (default DefaultMaxStreams):
	// the GET streams of legacy Streamable HTTP sessions (standalone and
	// resumed) and the streams of the HTTP+SSE transport, whose sessions
	// they are. A stream past it is refused with 503 and Retry-After.
	// The streams of POST responses are bounded by the requests in
	// flight instead.
	MaxStreams int
	// StreamIdleTimeout closes a stream MaxStreams counts once it has
	// carried nothing this long (default DefaultStreamIdleTimeout): a
	// Streamable HTTP client opens it again (the spec lets the server
	// close it at any time); an HTTP+SSE session ends with its stream, so
	// its stream is not closed while a request of it runs.
	StreamIdleTimeout time.Duration
	// ToolFilter, when set, chooses the tools a tools/list shows, from
	// all those registered; ctx is the request's (tool.CallerFrom names
	// the caller). tools/call still reaches every registered tool. A
	// gateway offering tool search shows a few tools and those each
	// caller found.
	ToolFilter func(ctx context.Context, tools []tool.Tool) []tool.Tool

	// Telemetry says where the server's spans and metrics go (see
	// Telemetry); the zero value uses OpenTelemetry's global providers.
	Telemetry Telemetry

	// Tasks configures the Tasks extension, which the server declares
	// when a tool's Execution lets it run as a task (see TaskOptions).
	Tasks TaskOptions

	// Completion, when set, answers completion/complete, and the server
	// declares the completions capability.
	Completion CompletionHandler

	taskrt    taskRuntime
	once      sync.Once
	telOnce   sync.Once
	tel       *instruments // made from Telemetry when serving begins
	results   sync.Pool    // *[]byte buffers results are encoded into
	parts     sync.Pool    // *responseParts of responses being written
	timers    sync.Pool    // *requestTimer stopped, for the next modern HTTP request
	metas     metaCache
	infoJSON  atomic.Pointer[infoJSON] // Info for results' _meta (serverInfoValue)
	mu        sync.RWMutex
	tools     tool.Registry
	resources map[string]*resourceEntry
	resOrder  []string
	templates []*templateEntry
	prompts   map[string]*promptEntry
	prOrder   []string
	conns     map[*conn]struct{}
	stateKey  []byte
	streams   atomic.Int64 // SSE streams held open (MaxStreams)
}

type resourceEntry struct {
	res Resource
	h   ResourceHandler
}

type templateEntry struct {
	tmpl ResourceTemplate
	re   *regexp.Regexp
	h    ResourceHandler
}

type promptEntry struct {
	p Prompt
	h PromptHandler
}

func (s *Server) init() {
	s.once.Do(func() {
		s.resources = map[string]*resourceEntry{}
		s.prompts = map[string]*promptEntry{}
		s.conns = map[*conn]struct{}{}
		// Every change to the tools, however made, reaches the clients.
		s.tools.OnChange(func() { s.listChanged(NotificationToolsListChanged) })
		// Hosts add arguments of their own to every tool (Gemini CLI's
		// wait_for_previous): those a schema does not name are dropped,
		// as the ecosystem's servers do (see tool.Pipeline).
		s.tools.IgnoreUnknownArguments(true)
		s.stateKey = s.StateKey
		if len(s.stateKey) == 0 {
			s.stateKey = make([]byte, 32)
			_, _ = rand.Read(s.stateKey) // never fails (crypto/rand panics instead)
		}
	})
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// AddTools registers tools. A duplicate name, or one model providers
// reject (see tool.CheckName), is an error, and none is added.
func (s *Server) AddTools(tools ...tool.Tool) error {
	s.init()
	return s.tools.Add(tools...)
}

// RemoveTools unregisters tools by name.
func (s *Server) RemoveTools(names ...string) {
	s.init()
	s.tools.Remove(names...)
}

// Registry returns the registry the server routes tools/call through:
// add middleware (Use) or sources of tools (SetSource) there. Clients are
// told of every change to its tools.
func (s *Server) Registry() *tool.Registry {
	s.init()
	return &s.tools
}

// AddResource registers a resource with a fixed URI. A URI already
// registered, or none, is an error, as a duplicate tool name is.
func (s *Server) AddResource(r Resource, h ResourceHandler) error {
	s.init()
	s.mu.Lock()
	if _, dup := s.resources[r.URI]; dup || r.URI == "" {
		s.mu.Unlock()
		return fmt.Errorf("mcp: a resource needs a URI of its own; %q is empty or registered already", r.URI)
	}
	s.resOrder = append(s.resOrder, r.URI)
	s.resources[r.URI] = &resourceEntry{res: r, h: h}
	s.mu.Unlock()
	s.listChanged(NotificationResourcesListChanged)
	return nil
}

// AddResourceTemplate registers a family of resources whose URIs match an
// RFC 6570 template such as "file:///{path}". Variables match one path
// segment ({var}) or the rest of the URI ({+var} or {/var*}). A template
// already registered is an error.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h ResourceHandler) error {
	s.init()
	re, err := compileTemplate(t.URITemplate)
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, e := range s.templates {
		if e.tmpl.URITemplate == t.URITemplate {
			s.mu.Unlock()
			return fmt.Errorf("mcp: the resource template %q is registered already", t.URITemplate)
		}
	}
	s.templates = append(s.templates, &templateEntry{tmpl: t, re: re, h: h})
	s.mu.Unlock()
	s.listChanged(NotificationResourcesListChanged)
	return nil
}

// RemoveResources unregisters resources by URI.
func (s *Server) RemoveResources(uris ...string) {
	s.init()
	s.mu.Lock()
	removed := false
	for _, u := range uris {
		if _, ok := s.resources[u]; ok {
			delete(s.resources, u)
			s.resOrder = slices.DeleteFunc(s.resOrder, func(v string) bool { return v == u })
			removed = true
		}
	}
	s.mu.Unlock()
	if removed {
		s.listChanged(NotificationResourcesListChanged)
	}
}

// RemoveResourceTemplates unregisters resource templates by their URI
// template.
func (s *Server) RemoveResourceTemplates(uriTemplates ...string) {
	s.init()
	s.mu.Lock()
	n := len(s.templates)
	s.templates = slices.DeleteFunc(s.templates, func(e *templateEntry) bool { return slices.Contains(uriTemplates, e.tmpl.URITemplate) })
	removed := len(s.templates) < n
	s.mu.Unlock()
	if removed {
		s.listChanged(NotificationResourcesListChanged)
	}
}

// AddPrompt registers a prompt. A name already registered, or none, is an
// error.
func (s *Server) AddPrompt(p Prompt, h PromptHandler) error {
	s.init()
	s.mu.Lock()
	if _, dup := s.prompts[p.Name]; dup || p.Name == "" {
		s.mu.Unlock()
		return fmt.Errorf("mcp: a prompt needs a name of its own; %q is empty or registered already", p.Name)
	}
	s.prOrder = append(s.prOrder, p.Name)
	sort.Strings(s.prOrder)
	s.prompts[p.Name] = &promptEntry{p: p, h: h}
	s.mu.Unlock()
	s.listChanged(NotificationPromptsListChanged)
	return nil
}

// RemovePrompts unregisters prompts by name.
func (s *Server) RemovePrompts(names ...string) {
	s.init()
	s.mu.Lock()
	removed := false
	for _, n := range names {
		if _, ok := s.prompts[n]; ok {
			delete(s.prompts, n)
			s.prOrder = slices.DeleteFunc(s.prOrder, func(v string) bool { return v == n })
			removed = true
		}
	}
	s.mu.Unlock()
	if removed {
		s.listChanged(NotificationPromptsListChanged)
	}
}

// NotifyResourceUpdated tells every client subscribed to uri that it changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.init()
	for _, c := range s.connections() {
		c.resourceUpdated(uri)
	}
}

func (s *Server) connections() []*conn {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// NotifyListChanged tells clients that asked to be told that a list changed:
// pass NotificationToolsListChanged, NotificationPromptsListChanged or
// NotificationResourcesListChanged. Adding and removing tools, prompts and
// resources notifies by itself; call this when what a handler returns
// changes without them.
func (s *Server) NotifyListChanged(notification string) {
	s.init()
	s.listChanged(notification)
}

func (s *Server) listChanged(method string) {
	for _, c := range s.connections() {
		c.listChanged(method)
	}
}

func (s *Server) track(c *conn) {
	c.tracked.Store(true)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
}

// untrack forgets c as it closes. A connection never tracked (that of
// a stateless request, unless it listened) costs no lock of the server's.
func (s *Server) untrack(c *conn) {
	if !c.tracked.Load() {
		return
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// capabilities are what this server offers, from what is registered.
func (s *Server) capabilities() ServerCapabilities {
	s.mu.RLock()
	defer s.mu.RUnlock()
	caps := ServerCapabilities{
		Logging: &struct{}{},
		Tools:   &ListChangedCapability{ListChanged: true},
	}
	if len(s.resources) > 0 || len(s.templates) > 0 {
		caps.Resources = &ResourcesCapability{Subscribe: true, ListChanged: true}
	}
	if len(s.prompts) > 0 {
		caps.Prompts = &ListChangedCapability{ListChanged: true}
	}
	if s.Completion != nil {
		caps.Completions = &struct{}{}
	}
	if s.hasTaskTools() {
		caps.Extensions = map[string]json.RawMessage{ExtensionTasks: json.RawMessage("{}")}
	}
	return caps
}

func (s *Server) maxQueued() int {
	if s.MaxQueuedRequests > 0 {
		return s.MaxQueuedRequests
	}
	return DefaultMaxQueuedRequests
}

func (s *Server) maxConcurrent() int {
	if s.MaxConcurrentRequests > 0 {
		return s.MaxConcurrentRequests
	}
	return DefaultMaxConcurrentRequests
}

func (s *Server) requestTimeout() time.Duration {
	if s.RequestTimeout > 0 {
		return s.RequestTimeout
	}
	return DefaultRequestTimeout
}

// acquireStream counts an SSE stream held open, and reports whether it is
// within MaxStreams; releaseStream uncounts it (only after true).
func (s *Server) acquireStream() bool {
	if s.streams.Add(1) > int64(s.maxStreams()) {
		s.streams.Add(-1)
		return false
	}
	return true
}

func (s *Server) releaseStream() { s.streams.Add(-1) }

func (s *Server) streamIdleTimeout() time.Duration {
	if s.StreamIdleTimeout > 0 {
		return s.StreamIdleTimeout
	}
	return DefaultStreamIdleTimeout
}

func (s *Server) maxStreams() int {
	if s.MaxStreams > 0 {
		return s.MaxStreams
	}
	return DefaultMaxStreams
}

func (s *Server) pageSize() int {
	if s.PageSize > 0 {
		return s.PageSize
	}
	return DefaultPageSize
}

// compileTemplate turns an RFC 6570 URI template into a regular expression
// with one named group per variable.
func compileTemplate(t string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	rest := t
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed {", t)
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		expr := rest[i+1 : i+j]
		op := ""
		if expr != "" && strings.ContainsRune("+#/.;?&", rune(expr[0])) {
			op, expr = expr[:1], expr[1:]
		}
		for k, v := range strings.Split(expr, ",") {
			v = strings.TrimSuffix(v, "*")
			if i := strings.IndexByte(v, ':'); i >= 0 {
				v = v[:i]
			}
			if !regexp.MustCompile(`^[A-Za-z0-9_]+$`).MatchString(v) {
				return nil, fmt.Errorf("uri template %q: bad variable name %q", t, v)
			}
			if k > 0 {
				b.WriteString(",")
			}
			switch op {
			case "+", "#":
				b.WriteString("(?P<" + v + ">.*)")
			case "/":
				b.WriteString("/(?P<" + v + ">.*)")
			case "?", "&":
				b.WriteString("[?&]" + v + "=(?P<" + v + ">[^&]*)")
			default:
				b.WriteString("(?P<" + v + ">[^/?#]+)")
			}
		}
		rest = rest[i+j+1:]
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// pagination

func encodeCursor(offset int) string {
	return fmt.Sprintf("o%d", offset)
}

func decodeCursor(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	var n int
	if _, err := fmt.Sscanf(c, "o%d", &n); err != nil || n < 0 || encodeCursor(n) != c {
		return 0, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q: pass back a nextCursor from an earlier page, or none for the first page", c)
	}
	return n, nil
}

// page returns the bounds of the page starting at cursor in a list of n.
func (s *Server) page(cursor string, n int) (start, end int, next string, err error) {
	start, err = decodeCursor(cursor)
	if err != nil {
		return 0, 0, "", err
	}
	if start > n {
		return 0, 0, "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q: past the end of the list", cursor)
	}
	end = start + s.pageSize()
	if end >= n {
		end = n
	} else {
		next = encodeCursor(end)
	}
	return start, end, next, nil
}
