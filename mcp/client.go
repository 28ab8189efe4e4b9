package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/tool"
)

// Client defaults.
const (
	DefaultProbeTimeout = 5 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
	// maxInputRounds bounds the retries of one input_required request.
	maxInputRounds = 16
)

// Client connects to MCP servers of either era. Set its fields, then call
// Connect once per server. A handler left nil is not declared as a
// capability, and the server is told so.
type Client struct {
	// Info identifies the client to servers.
	Info Implementation
	// Sampling answers a server's request for an LLM completion.
	Sampling func(ctx context.Context, p *CreateMessageParams) (*CreateMessageResult, error)
	// Elicitation answers a server's request for user input.
	Elicitation func(ctx context.Context, p *ElicitParams) (*ElicitResult, error)
	// ElicitationURL declares that Elicitation answers URL mode too
	// (sending the user to a URL); without it, forms only are declared.
	ElicitationURL bool
	// Roots answers a server's request for the client's roots.
	Roots func(ctx context.Context) ([]Root, error)
	// Notify receives the server's notifications (progress, log messages,
	// list changes, resource updates). It must not block for long.
	Notify func(method string, params json.RawMessage)
	// TaskStarted, when set, is told the id of each task (the Tasks
	// extension) a tools/call was answered with, before CallTool follows
	// it: a program that keeps it can resume the task after a restart
	// (ClientSession.AwaitTask).
	TaskStarted func(taskID string)

	// ProtocolVersion forces a revision. Empty means: probe for the modern
	// revision with server/discover and fall back to the legacy handshake.
	ProtocolVersion string
	// ProbeTimeout bounds the server/discover probe (default
	// DefaultProbeTimeout); a server silent that long is taken for legacy.
	ProbeTimeout time.Duration
	// CallTimeout bounds each request without a deadline of its own
	// (default DefaultCallTimeout).
	CallTimeout time.Duration
	// LogLevel, when set, asks a server for log messages of this level and
	// above (per request in the modern era, by logging/setLevel in legacy).
	LogLevel LoggingLevel
	// Logger receives the client's diagnostics. Nil discards them.
	Logger *slog.Logger
	// Telemetry says where the client's spans and metrics go (see
	// Telemetry); the zero value uses OpenTelemetry's global providers.
	Telemetry Telemetry
}

// ClientTransport carries a client's messages to one server: see
// CommandTransport, HTTPTransport, SSETransport and InMemoryTransport. A
// program can implement it to reach servers some other way (a socket, a
// WebSocket, a server in the same process): Client.Connect then runs the
// session over the ClientConn that Connect returns.
type ClientTransport interface {
	// Connect opens a connection to the server. ctx bounds connecting
	// only; the connection lasts until its Close.
	Connect(ctx context.Context) (ClientConn, error)
}

// ClientConn is one connection of a client to a server, carrying JSON-RPC
// messages both ways: the client's requests, notifications and responses
// (to the server's requests) go out through Write, and everything the
// server sends comes in through Read.
type ClientConn interface {
	// Read returns the next message from the server. It blocks until one
	// comes, the connection ends (an error, io.EOF when the server closed
	// it), or ctx is done. It is not called concurrently with itself.
	Read(ctx context.Context) (*jsonrpc.Message, error)
	// Write sends a message to the server. It may be called concurrently
	// with itself and with Read.
	Write(ctx context.Context, m *jsonrpc.Message) error
	// Close ends the connection; a Read in progress then returns.
	Close() error
}

// builtinTransport is a transport of this package, which a session drives
// directly rather than through its ClientConn: its own connection types
// deliver responses to their callers without a hand-off between
// goroutines, and mirror requests into HTTP headers.
type builtinTransport interface {
	ClientTransport
	connect(ctx context.Context, in inboundFunc) (clientConn, error)
}

// builtin returns t as a transport of this package; a type of the
// program's that embeds one is not, so that its Connect is what runs.
func builtin(t ClientTransport) (builtinTransport, bool) {
	switch b := t.(type) {
	case *CommandTransport:
		return b, true
	case *HTTPTransport:
		return b, true
	case *SSETransport:
		return b, true
	}
	return nil, false
}

// inboundFunc handles a message the server sent that is not a response:
// a notification, or (legacy) a request to the client.
type inboundFunc func(ctx context.Context, m *jsonrpc.Message)

// clientConn is one transport connection.
type clientConn interface {
	// roundTrip sends a request and returns its response. Other messages
	// received meanwhile go to the inbound handler.
	roundTrip(ctx context.Context, m *jsonrpc.Message, h callHeaders) (*jsonrpc.Message, error)
	// send sends a notification or a response to a server request.
	send(ctx context.Context, m *jsonrpc.Message) error
	// setLegacy tells the transport the legacy handshake is done, with the
	// negotiated version (HTTP then opens its GET stream).
	setLegacy(version string)
	close() error
}

// callHeaders are what HTTP mirrors into headers for a request.
type callHeaders struct {
	method, name string
	params       map[string]string // Mcp-Param-* headers
	modern       string            // the modern protocol version, if any
}

// ClientSession is a connection to one server.
type ClientSession struct {
	client *Client
	conn   clientConn
	nextID atomic.Int64

	modern     bool
	version    string
	serverInfo Implementation
	caps       ServerCapabilities
	instr      string

	mu        sync.Mutex
	toolCache map[string]tool.Info // by name, for x-mcp-header mirroring
	// toolsFresh says whether the last tools/list still holds: until a
	// list_changed notification, and, when the server gave a ttlMs, until
	// toolsExpire.
	toolsFresh  bool
	toolsExpire time.Time
	closed      bool

	// The _meta of modern requests, and its JSON.
	metaOnce sync.Once
	meta     *RequestMeta
	metaJSON []byte

	// reinit serializes re-initializations of an expired legacy session;
	// epoch counts them.
	reinit sync.Mutex
	epoch  atomic.Int64

	// tel makes the session's spans and metrics, with netAttrs, the
	// transport's attributes; opened is when Connect began.
	tel      *instruments
	netAttrs []attribute.KeyValue
	opened   time.Time
}

// Connect opens a session with the server behind t, settling the protocol
// era: 2026-07-28 when the server answers server/discover, else the legacy
// initialize handshake.
func (c *Client) Connect(ctx context.Context, t ClientTransport) (*ClientSession, error) {
	s := &ClientSession{client: c, toolCache: map[string]tool.Info{}, opened: time.Now(),
		tel: c.Telemetry.instruments("client", trace.SpanKindClient), netAttrs: clientNetAttrs(t)}
	var conn clientConn
	if b, ok := builtin(t); ok {
		var err error
		if conn, err = b.connect(ctx, s.inbound); err != nil {
			return nil, err
		}
	} else {
		cc, err := t.Connect(ctx)
		if err != nil {
			return nil, err
		}
		conn = newStreamConn(cc, s.inbound)
	}
	s.conn = conn
	if err := s.handshake(ctx); err != nil {
		conn.close()
		return nil, err
	}
	return s, nil
}

// HandshakeError is a failure to open a session: the step that failed
// (MethodDiscover or MethodInitialize) and why.
type HandshakeError struct {
	Step string
	Err  error
}

// Error names the step once, also when the transport named it already.
func (e *HandshakeError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Step+": ") {
		return msg
	}
	return e.Step + ": " + msg
}

// Unwrap returns why the step failed.
func (e *HandshakeError) Unwrap() error { return e.Err }

func (c *Client) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Capabilities are what the client declares, from the handlers it has.
func (c *Client) Capabilities() ClientCapabilities {
	var caps ClientCapabilities
	if c.Sampling != nil {
		caps.Sampling = &SamplingCapability{}
	}
	if c.Elicitation != nil {
		caps.Elicitation = &ElicitationCapability{Form: json.RawMessage("{}")}
		if c.ElicitationURL {
			caps.Elicitation.URL = json.RawMessage("{}")
		}
	}
	if c.Roots != nil {
		caps.Roots = &RootsCapability{}
	}
	// CallTool follows a task to its result (see awaitTask).
	caps.Extensions = map[string]json.RawMessage{ExtensionTasks: json.RawMessage("{}")}
	return caps
}

func (s *ClientSession) handshake(ctx context.Context) error {
	c := s.client
	_, legacyOnly := s.conn.(interface{ legacyOnly() })
	switch v := c.ProtocolVersion; {
	case v != "" && IsModern(v) && !legacyOnly:
		return s.discover(ctx, v)
	case v != "" && !IsModern(v):
		return s.initialize(ctx, v)
	case legacyOnly:
		return s.initialize(ctx, LatestLegacyVersion)
	}
	timeout := c.ProbeTimeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	err := s.discover(pctx, LatestVersion)
	cancel()
	if err == nil {
		return nil
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == CodeUnsupportedProtocolVersion {
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(rpcErr.Data, &data)
		for _, v := range data.Supported {
			if IsModern(v) {
				return s.discover(ctx, v)
			}
		}
		for _, v := range data.Supported {
			if isLegacy(v) {
				return s.initialize(ctx, v)
			}
		}
		return fmt.Errorf("the server speaks none of our protocol versions (it supports %v): %w", data.Supported, err)
	}
	if ctx.Err() != nil {
		return &HandshakeError{Step: MethodDiscover, Err: ctx.Err()}
	}
	c.logger().Debug("mcp: server/discover failed; trying the legacy handshake", "err", err)
	return s.initialize(ctx, LatestLegacyVersion)
}

func (s *ClientSession) discover(ctx context.Context, version string) error {
	s.modern, s.version = true, version
	var res DiscoverResult
	if err := s.Call(ctx, MethodDiscover, &Params{}, &res); err != nil {
		s.modern, s.version = false, ""
		return &HandshakeError{Step: MethodDiscover, Err: err}
	}
	if res.ServerInfo != nil {
		s.serverInfo = *res.ServerInfo
	} else if info, ok := res.Meta[MetaServerInfo]; ok {
		b, _ := json.Marshal(info)
		_ = json.Unmarshal(b, &s.serverInfo)
	}
	s.caps, s.instr = res.Capabilities, res.Instructions
	return nil
}

func (s *ClientSession) initialize(ctx context.Context, version string) error {
	c := s.client
	var res InitializeResult
	err := s.Call(ctx, MethodInitialize, &InitializeParams{ProtocolVersion: version, Capabilities: c.Capabilities(), ClientInfo: c.Info}, &res)
	if err != nil {
		return &HandshakeError{Step: MethodInitialize, Err: err}
	}
	if !isLegacy(res.ProtocolVersion) {
		return &HandshakeError{Step: MethodInitialize, Err: fmt.Errorf("the server chose protocol version %q, which this client does not speak", res.ProtocolVersion)}
	}
	s.mu.Lock()
	s.version, s.serverInfo, s.caps, s.instr = res.ProtocolVersion, res.ServerInfo, res.Capabilities, res.Instructions
	s.mu.Unlock()
	s.conn.setLegacy(res.ProtocolVersion)
	var p Params
	err = s.clientNotification(ctx, NotificationInitialized, &p, func(ctx context.Context) error {
		m := &jsonrpc.Message{Method: NotificationInitialized}
		if p.Meta != nil {
			var err error
			if m.Params, err = jsonrpc.Marshal(&p); err != nil {
				return err
			}
		}
		return s.conn.send(ctx, m)
	})
	if err != nil {
		return fmt.Errorf("sending notifications/initialized: %w", err)
	}
	if c.LogLevel != "" && s.caps.Logging != nil {
		if err := s.Call(ctx, MethodSetLevel, &SetLevelParams{Level: c.LogLevel}, nil); err != nil {
			c.logger().Debug("mcp: logging/setLevel failed", "err", err)
		}
	}
	return nil
}

// ProtocolVersion is the revision the session speaks.
func (s *ClientSession) ProtocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// ServerInfo identifies the server.
func (s *ClientSession) ServerInfo() Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serverInfo
}

// ServerCapabilities are what the server offers.
func (s *ClientSession) ServerCapabilities() ServerCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// Instructions are the server's guidance for a model.
func (s *ClientSession) Instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instr
}

// Close ends the session: for stdio, the server process ends too.
func (s *ClientSession) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.sessionEnded(s.Err())
	return s.conn.close()
}

// RequestParams is implemented by the params of every request of this
// package (each *XxxParams type, and *Params itself): they embed Params,
// which carries the request's _meta.
type RequestParams interface{ params() *Params }

// Call sends a request and decodes its result into result (which may be
// nil). params embeds Params (any *XxxParams of this package) or is nil. In
// the modern era it carries the request's _meta and, when the server
// answers input_required, fulfils the input requests with the client's
// handlers and retries. A JSON-RPC error comes back as a *jsonrpc.Error.
func (s *ClientSession) Call(ctx context.Context, method string, params RequestParams, result any) (err error) {
	if params == nil {
		params = &Params{}
	}
	if _, ok := ctx.Deadline(); !ok {
		timeout := s.client.CallTimeout
		if timeout <= 0 {
			timeout = DefaultCallTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	p := params.params()
	if s.modern {
		if p.Meta == nil {
			p.Meta = s.standardMeta() // shared: not to be modified
		} else {
			s.fillMeta(p.Meta)
		}
	}
	ctx, op := s.startCall(ctx, method, p)
	defer func() { s.endCall(ctx, &op, method, params, result, err) }()
	h := s.headers(method, params)
	retried := false
	for round := 0; ; round++ {
		epoch := s.epoch.Load()
		raw, err := s.roundTrip(ctx, method, params, h, &op)
		if err != nil && !s.modern && !retried && method != MethodInitialize && errors.Is(err, errSessionExpired) {
			// A legacy server forgot the session: start a new one and
			// retry the request once.
			retried = true
			if rerr := s.reinitialize(ctx, epoch); rerr != nil {
				return fmt.Errorf("%s: the server ended the session, and starting a new one failed: %w", method, rerr)
			}
			continue
		}
		if err != nil {
			return err
		}
		if !s.modern {
			return decodeResult(method, raw, result)
		}
		if r, ok := result.(*CallToolResult); ok {
			// Read as the result it most likely is, in one pass.
			if err := decodeResult(method, raw, r); err != nil || r.ResultType != ResultInputRequired {
				if err == nil && r.ResultType == ResultTask {
					r.task = raw
				}
				return err
			}
			*r = CallToolResult{}
		}
		var kind struct {
			ResultType    string                  `json:"resultType"`
			InputRequests map[string]InputRequest `json:"inputRequests"`
			RequestState  string                  `json:"requestState"`
		}
		if err := json.Unmarshal(raw, &kind); err != nil {
			return fmt.Errorf("%s: malformed result: %w", method, err)
		}
		if kind.ResultType != ResultInputRequired {
			return decodeResult(method, raw, result)
		}
		if round >= maxInputRounds {
			return fmt.Errorf("%s: the server asked for input %d times; giving up", method, round)
		}
		answers, err := s.answerInputs(ctx, kind.InputRequests)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		p.InputResponses, p.RequestState = answers, kind.RequestState
	}
}

// fillMeta puts in m what a modern request's _meta carries about the
// session.
func (s *ClientSession) fillMeta(m *RequestMeta) {
	c := s.client
	caps := c.Capabilities()
	info := c.Info
	m.ProtocolVersion = s.version
	m.ClientCapabilities = &caps
	m.ClientInfo = &info
	if c.LogLevel != "" {
		m.LogLevel = c.LogLevel
	}
}

// standardMeta returns the _meta of a modern request that brings nothing
// of its own, made once with its JSON: it is the same for every request.
func (s *ClientSession) standardMeta() *RequestMeta {
	s.metaOnce.Do(func() {
		m := &RequestMeta{}
		s.fillMeta(m)
		b, err := jsonrpc.Marshal(m)
		if err == nil {
			s.meta, s.metaJSON = m, b
		} else {
			s.meta = m // encoded with each request instead
		}
	})
	return s.meta
}

// reinitialize opens a new legacy session after the server ended the one
// of epoch, unless another request already did.
func (s *ClientSession) reinitialize(ctx context.Context, epoch int64) error {
	s.reinit.Lock()
	defer s.reinit.Unlock()
	if s.epoch.Load() != epoch {
		return nil
	}
	s.client.logger().Info("mcp: the server ended the session; starting a new one")
	if err := s.initialize(ctx, s.version); err != nil {
		return err
	}
	s.epoch.Add(1)
	return nil
}

func decodeResult(method string, raw json.RawMessage, result any) error {
	var err error
	switch r := result.(type) {
	case nil:
		return nil
	case *CallToolResult:
		err = readCallToolResult(raw, r)
	default:
		err = json.Unmarshal(raw, result)
	}
	if err != nil {
		return fmt.Errorf("%s: malformed result: %w", method, err)
	}
	return nil
}

func (s *ClientSession) roundTrip(ctx context.Context, method string, params any, h callHeaders, op *clientOp) (json.RawMessage, error) {
	id := jsonrpc.Int64ID(s.nextID.Add(1))
	op.id = id
	p, err := marshalParams(params, s.meta, s.metaJSON)
	if err != nil {
		return nil, fmt.Errorf("%s params: %w", method, err)
	}
	resp, err := s.conn.roundTrip(ctx, &jsonrpc.Message{ID: id, Method: method, Params: p}, h)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// headers computes what HTTP mirrors into headers for a request.
func (s *ClientSession) headers(method string, params any) callHeaders {
	h := callHeaders{method: method}
	if s.modern {
		h.modern = s.version
	}
	switch p := params.(type) {
	case *CallToolParams:
		h.name = p.Name
		s.mu.Lock()
		t, ok := s.toolCache[p.Name]
		s.mu.Unlock()
		if ok {
			h.params = paramHeaderValues(t.InputSchema, p.Arguments)
		}
	case *GetPromptParams:
		h.name = p.Name
	case *ReadResourceParams:
		h.name = p.URI
	case *TaskParams:
		h.name = p.TaskID // the Tasks extension's routing header
	}
	return h
}

// answerInputs fulfils a modern server's input requests.
func (s *ClientSession) answerInputs(ctx context.Context, reqs map[string]InputRequest) (InputResponses, error) {
	out := InputResponses{}
	for key, r := range reqs {
		res, err := s.answer(ctx, r.Method, r.Params)
		if err != nil {
			return nil, fmt.Errorf("answering input request %q (%s): %w", key, r.Method, err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		out[key] = b
	}
	return out, nil
}

// answer runs the client handler for a server's request.
func (s *ClientSession) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c := s.client
	switch method {
	case MethodCreateMessage:
		if c.Sampling == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this client does not support sampling")
		}
		var p CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid sampling/createMessage params: %v", err)
		}
		return c.Sampling(ctx, &p)
	case MethodElicit:
		if c.Elicitation == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this client does not support elicitation")
		}
		var p ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid elicitation/create params: %v", err)
		}
		res, err := c.Elicitation(ctx, &p)
		if err != nil {
			return nil, err
		}
		if res.Action == "accept" {
			res.Content = applyElicitDefaults(p.RequestedSchema, res.Content)
		}
		return res, nil
	case MethodListRoots:
		if c.Roots == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this client does not expose roots")
		}
		roots, err := c.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []Root{}
		}
		return &ListRootsResult{Roots: roots}, nil
	case MethodPing:
		return struct{}{}, nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %q", method)
}

// applyElicitDefaults fills, in accepted form content, the properties the
// user left out that the requested schema gives a default for.
func applyElicitDefaults(requested json.RawMessage, content map[string]any) map[string]any {
	props, err := schema.Properties(requested)
	if err != nil {
		return content
	}
	for _, prop := range props {
		if len(prop.Default) == 0 {
			continue
		}
		if _, ok := content[prop.Name]; ok {
			continue
		}
		var v any
		if json.Unmarshal(prop.Default, &v) == nil {
			if content == nil {
				content = map[string]any{}
			}
			content[prop.Name] = v
		}
	}
	return content
}

// inbound handles the server's notifications and (legacy) requests.
func (s *ClientSession) inbound(ctx context.Context, m *jsonrpc.Message) {
	c := s.client
	if m.IsNotification() {
		if c.Notify != nil {
			c.Notify(m.Method, m.Params)
		}
		if m.Method == NotificationToolsListChanged {
			s.mu.Lock()
			s.toolsFresh = false
			s.mu.Unlock()
		}
		return
	}
	if !m.IsRequest() {
		return
	}
	ctx, end := s.startInbound(ctx, m)
	res, err := s.answer(ctx, m.Method, m.Params)
	reply := &jsonrpc.Message{ID: m.ID}
	defer func() { end(reply.Error) }()
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", err)
		}
		reply.Error = rpcErr
	} else if b, merr := jsonrpc.Marshal(res); merr != nil {
		reply.Error = jsonrpc.NewError(jsonrpc.CodeInternalError, "encoding the result: %v", merr)
	} else {
		reply.Result = b
	}
	if err := s.conn.send(ctx, reply); err != nil {
		c.logger().Debug("mcp: answering a server request", "method", m.Method, "err", err)
	}
}

// ListTools returns every tool of the server, following pagination. Over
// Streamable HTTP it leaves out, with a warning to the Logger, tools whose
// x-mcp-header annotations are invalid, as that transport requires.
func (s *ClientSession) ListTools(ctx context.Context) ([]tool.Info, error) {
	var expire time.Time
	first := true
	all, err := listAll(ctx, s, MethodToolsList, func(res *ListToolsResult) ([]tool.Info, string) {
		if res.TTLMs != nil && first {
			expire = time.Now().Add(time.Duration(*res.TTLMs) * time.Millisecond)
		}
		first = false
		return res.Tools, res.NextCursor
	})
	if err != nil {
		return nil, err
	}
	if _, ok := s.conn.(interface{ isHTTP() }); ok {
		// Tools whose arguments cannot be mirrored into headers as
		// declared are left out, as the Streamable HTTP binding requires.
		kept := all[:0]
		for _, t := range all {
			if err := checkHeaderAnnotations(t.InputSchema); err != nil {
				s.client.logger().Warn("mcp: leaving out a tool with invalid x-mcp-header annotations", "tool", t.Name, "reason", err)
				continue
			}
			kept = append(kept, t)
		}
		all = kept
	}
	s.mu.Lock()
	s.toolsFresh, s.toolsExpire = true, expire
	s.toolCache = make(map[string]tool.Info, len(all))
	for _, t := range all {
		s.toolCache[t.Name] = t
	}
	s.mu.Unlock()
	return all, nil
}

// ListResources returns every resource of the server, following
// pagination.
func (s *ClientSession) ListResources(ctx context.Context) ([]Resource, error) {
	return listAll(ctx, s, MethodResourcesList, func(res *ListResourcesResult) ([]Resource, string) {
		return res.Resources, res.NextCursor
	})
}

// ListResourceTemplates returns every resource template of the server,
// following pagination.
func (s *ClientSession) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll(ctx, s, MethodResourceTemplatesList, func(res *ListResourceTemplatesResult) ([]ResourceTemplate, string) {
		return res.ResourceTemplates, res.NextCursor
	})
}

// ListPrompts returns every prompt of the server, following pagination.
func (s *ClientSession) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listAll(ctx, s, MethodPromptsList, func(res *ListPromptsResult) ([]Prompt, string) {
		return res.Prompts, res.NextCursor
	})
}

// maxListPages bounds the pages of one listing, against a server that
// never stops giving a next cursor.
const maxListPages = 10000

// listAll calls a list method, following each next cursor until the
// server gives none; page returns the items and the next cursor of one
// result.
func listAll[R, T any](ctx context.Context, s *ClientSession, method string, page func(*R) ([]T, string)) ([]T, error) {
	var all []T
	cursor := ""
	for range maxListPages {
		var res R
		if err := s.Call(ctx, method, &PaginatedParams{Cursor: cursor}, &res); err != nil {
			return nil, err
		}
		items, next := page(&res)
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("%s: the server gave more than %d pages, each with a next cursor; giving up", method, maxListPages)
}

// ToolsFresh reports whether the tools last returned by ListTools still
// hold: no list_changed notification came since, and the freshness the
// server gave (ttlMs, 2026-07-28) has not run out.
func (s *ClientSession) ToolsFresh() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toolsFresh && (s.toolsExpire.IsZero() || time.Now().Before(s.toolsExpire))
}

// ToolsExpiry returns when the tools last returned by ListTools go stale
// by the freshness the server gave (ttlMs, 2026-07-28); zero when it gave
// none.
func (s *ClientSession) ToolsExpiry() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toolsExpire
}

// endedConn is a transport connection that can end on its own: a stdio
// server process that exits.
type endedConn interface {
	doneChan() <-chan struct{}
	endErr() error
}

// Done returns a channel that is closed when the connection ends: a stdio
// server exited, or the session was closed. It is nil for transports that
// hold no connection of their own (HTTP), whose failures show in calls.
func (s *ClientSession) Done() <-chan struct{} {
	if e, ok := s.conn.(endedConn); ok {
		return e.doneChan()
	}
	return nil
}

// Err says why the connection ended, once Done is closed; nil before.
func (s *ClientSession) Err() error {
	if e, ok := s.conn.(endedConn); ok {
		return e.endErr()
	}
	return nil
}

// CallTool calls a tool with arguments given as a JSON object (nil means
// none). A tool's own failure is a result with IsError set, not an error.
// A call the server answers with a task (the Tasks extension, or a
// 2025-11-25 server's task-only tool) is followed to its result.
func (s *ClientSession) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallToolResult, error) {
	return s.CallToolWith(ctx, &CallToolParams{Name: name, Arguments: args})
}

// CallToolWith is CallTool with the whole params, for a caller that sets
// their _meta (a progress token, say).
func (s *ClientSession) CallToolWith(ctx context.Context, p *CallToolParams) (*CallToolResult, error) {
	if !s.modern && s.legacyTaskTool(ctx, p.Name) {
		return s.callLegacyTask(ctx, p)
	}
	var res CallToolResult
	if err := s.Call(ctx, MethodToolsCall, p, &res); err != nil {
		return nil, err
	}
	if res.task != nil {
		return s.awaitTask(ctx, res.task)
	}
	return &res, nil
}
