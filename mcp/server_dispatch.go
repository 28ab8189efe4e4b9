package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/fastpath"
	"github.com/toolwire/toolwire/internal/jsonvalue"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// dispatch routes a request by method.
func (s *Server) dispatch(ctx context.Context, req *request) (any, error) {
	switch req.method {
	case MethodInitialize:
		return s.initialize(req)
	case MethodPing:
		var p Params
		if err := decodeLenient(req, &p); err != nil {
			return nil, err
		}
		return &EmptyResult{}, nil
	case MethodDiscover:
		return s.discover(req)
	case MethodToolsList:
		return s.listTools(req)
	case MethodToolsCall:
		return s.callTool(ctx, req)
	case MethodResourcesList:
		return s.listResources(req)
	case MethodResourceTemplatesList:
		return s.listTemplates(req)
	case MethodResourcesRead:
		return s.readResource(ctx, req)
	case MethodResourcesSubscribe, MethodResourcesUnsubscribe:
		return s.subscribe(req)
	case MethodPromptsList:
		return s.listPrompts(req)
	case MethodPromptsGet:
		return s.getPrompt(ctx, req)
	case MethodComplete:
		return s.completion(ctx, req)
	case MethodSetLevel:
		return s.setLevel(req)
	case MethodSubscriptionsListen:
		return s.listen(ctx, req)
	case MethodTasksGet:
		return s.tasksGet(ctx, req)
	case MethodTasksUpdate:
		return s.tasksUpdate(ctx, req)
	case MethodTasksCancel:
		return s.tasksCancel(ctx, req)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %q", req.method)
}

// decode reads the request's params into p and settles the request's era:
// modern when _meta names a protocol version, legacy when the connection
// has been initialized; anything else is refused.
func decode(req *request, p RequestParams) error {
	if err := unmarshalParams(req, p); err != nil {
		return err
	}
	return req.resolve(p.params(), false)
}

// decodeLenient is decode for requests allowed before initialize (ping).
func decodeLenient(req *request, p RequestParams) error {
	if err := unmarshalParams(req, p); err != nil {
		return err
	}
	return req.resolve(p.params(), true)
}

func unmarshalParams(req *request, p any) error {
	if len(req.params) == 0 {
		return nil
	}
	if req.params[0] != '{' {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for %s: params must be an object", req.method)
	}
	if err := json.Unmarshal(req.params, p); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for %s: %s", req.method, describeJSONError(err))
	}
	return nil
}

// decode is the package-level decode for tools/call, the busiest method:
// its params are read in one pass over JSON that jsonrpc.Decode has
// already checked, without encoding/json's second syntax check and
// reflection (and without p escaping through an interface).
func (p *CallToolParams) decode(req *request) error {
	if len(req.params) > 0 {
		if req.params[0] != '{' {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for %s: params must be an object", req.method)
		}
		if err := p.readParams(req.params, req.conn.srv, req.conn.fields); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for %s: %s", req.method, describeJSONError(err))
		}
	}
	return req.resolve(&p.Params, false)
}

// readParams reads tools/call params: name, arguments and _meta here
// (_meta through metas), the members of multi round-trip retries through
// encoding/json, and only when present. read, when set, is what
// readHeaderFields found in data, which then is not walked again.
func (p *CallToolParams) readParams(data []byte, s *Server, read *headerFields) error {
	var name, meta []byte
	var retry bool
	if read != nil && read.whole {
		name, meta, retry = read.rawName, read.rawMeta, read.retry
		if a := read.arguments; a != nil {
			p.Arguments = a[:len(a):len(a)]
		}
	} else {
		_, err := jsonvalue.Object(data, 0, func(key string, start, end int) {
			switch key {
			case "name":
				name = data[start:end]
			case "arguments":
				p.Arguments = data[start:end:end]
			case "_meta":
				meta = data[start:end]
			case "inputResponses", "requestState":
				retry = true
			}
		})
		if err != nil {
			return err
		}
	}
	var err error
	if name != nil && string(name) != "null" {
		if name[0] != '"' {
			return fmt.Errorf("name must be a string, got %s", jsonvalue.TypeName(name[0]))
		}
		if known, ok := fastpath.RegisteredName(&s.tools, name[1:len(name)-1]); ok && bytes.IndexByte(name, '\\') < 0 {
			p.Name = known // the registry's string: no copy
		} else if p.Name, err = jsonvalue.String(name); err != nil {
			return err
		}
	}
	if retry {
		var c Params // decoded apart, so that p itself stays off the heap
		err := json.Unmarshal(data, &c)
		p.Params = c
		return err
	}
	switch {
	case read != nil && read.whole && read.decoded != nil:
		p.Meta = read.decoded
	case meta != nil && string(meta) != "null":
		p.Meta, err = s.metas.get(meta)
	}
	return err
}

// metaCache keeps the request _meta objects a server has decoded, by their
// JSON: a modern client sends the same _meta (protocol version,
// capabilities, client info) with every request. The decoded values are
// shared: read them, never modify them.
type metaCache struct {
	mu sync.Mutex
	m  map[string]*metaEntry
}

// metaEntry is a _meta object as a metaCache keeps it: decoded, and what
// readHeaderFields reads of it (readMetaFields), copied.
type metaEntry struct {
	meta          *RequestMeta
	version, caps []byte
}

// maxCachedMetas bounds a metaCache; when full it starts over.
const maxCachedMetas = 64

func (c *metaCache) get(raw []byte) (*RequestMeta, error) {
	var buf [512]byte
	e, key := c.lookup(raw, buf[:0])
	if e != nil {
		return e.meta, nil
	}
	m := new(RequestMeta)
	if err := json.Unmarshal(raw, m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Field = "_meta." + te.Field
		}
		return nil, err
	}
	if m.ProgressToken != nil {
		return m, nil // one request's own
	}
	m.Traceparent, m.Tracestate, m.Baggage = "", "", ""
	e = &metaEntry{meta: m}
	// From raw: key need not be JSON. Every _meta kept under key has the
	// same members but for the trace context, which is neither.
	version, caps := readMetaFields(raw)
	e.version, e.caps = bytes.Clone(version), bytes.Clone(caps)
	c.mu.Lock()
	if len(c.m) >= maxCachedMetas || c.m == nil {
		c.m = map[string]*metaEntry{}
	}
	c.m[string(key)] = e
	c.mu.Unlock()
	return m, nil
}

// lookup returns the entry kept for raw, a _meta object, or nil, and the
// key it is kept under (appended to buf when it is not raw itself). The
// trace context differs from request to request: without it is the key,
// and what is kept (the server's telemetry reads the trace context from
// the request itself).
func (c *metaCache) lookup(raw, buf []byte) (_ *metaEntry, key []byte) {
	c.mu.Lock()
	e := c.m[string(raw)]
	c.mu.Unlock()
	if e != nil {
		return e, raw
	}
	key = withoutTraceContext(buf, raw)
	if len(key) != len(raw) {
		c.mu.Lock()
		e = c.m[string(key)]
		c.mu.Unlock()
	}
	return e, key
}

// withoutTraceContext returns raw, a _meta object, without its trace
// context members, appended to dst (a cache key, not always JSON: a
// member first leaves the comma after it); raw itself when it has none.
func withoutTraceContext(dst, raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"trace`)) && !bytes.Contains(raw, []byte(`"baggage"`)) {
		return raw
	}
	// Copies the text between the trace context members: each member cut
	// runs from the end of the value before it (or the opening brace) to
	// the end of its own value. The result is a key, not JSON to decode.
	out, from, prev := dst, 0, 1
	_, err := jsonvalue.Object(raw, 0, func(key string, _, end int) {
		switch key {
		case "traceparent", "tracestate", "baggage":
			out = append(out, raw[from:prev]...)
			from = end
		}
		prev = end
	})
	if err != nil {
		return raw
	}
	return append(out, raw[from:]...)
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "params"
		}
		return fmt.Sprintf("%s must be %s, got %s", field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64", "int32", "uint", "uint64":
		return "a number"
	}
	return goKind
}

// resolve settles the era of a request from its _meta and the session.
func (r *request) resolve(p *Params, allowBeforeInit bool) error {
	meta := p.Meta
	if meta != nil {
		// The token goes back as sent in every progress notification:
		// bytes that are not UTF-8 would make those invalid JSON text.
		if !utf8.Valid(meta.ProgressToken) {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for %s: _meta.progressToken is not valid UTF-8 (JSON text must be UTF-8); send it as UTF-8 text or a number", r.method)
		}
		r.progressToken = meta.ProgressToken
	}
	c := r.conn
	if meta != nil && meta.ProtocolVersion != "" {
		v := meta.ProtocolVersion
		if !IsModern(v) {
			c.mu.Lock()
			legacyMatch := c.initialized && c.version == v
			c.mu.Unlock()
			if !legacyMatch {
				return unsupportedVersion(v)
			}
		} else {
			r.modern = true
			r.version = v
			r.caps = meta.ClientCapabilities
			if r.caps == nil {
				return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: params._meta[%q] is missing; protocol %s requires it on every request (use {} for none)", MetaClientCapabilities, v)
			}
			if removedInModern(r.method) {
				return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s is not part of protocol %s", r.method, v)
			}
			r.clientInfo = meta.ClientInfo
			if meta.LogLevel != "" {
				if !meta.LogLevel.Valid() {
					return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: unknown log level %q in _meta (use debug, info, notice, warning, error, critical, alert or emergency)", meta.LogLevel)
				}
				r.logLevel = meta.LogLevel
			}
			r.responses = p.InputResponses
			if p.RequestState != "" {
				if err := r.conn.srv.openState(r, p.RequestState); err != nil {
					return err
				}
			}
			return nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initialized {
		r.version = c.version
		r.caps, r.clientInfo = c.caps, c.clientInfo
		r.logLevel = c.logLevel
		if r.logLevel == "" {
			r.logLevel = LevelDebug // legacy: every message until logging/setLevel
		}
		return nil
	}
	if allowBeforeInit {
		r.caps = &ClientCapabilities{}
		return nil
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"no protocol version for %s: send initialize first (protocol %s and earlier), or put %q and %q in params._meta (protocol %s)",
		r.method, LatestLegacyVersion, MetaProtocolVersion, MetaClientCapabilities, LatestVersion)
}

func unsupportedVersion(v string) *jsonrpc.Error {
	return jsonrpc.NewError(CodeUnsupportedProtocolVersion, "Unsupported protocol version %q; this server speaks %s", v, strings.Join(SupportedVersions(), ", ")).
		WithData(map[string]any{"supported": SupportedVersions(), "requested": v})
}

func (s *Server) initialize(req *request) (any, error) {
	var p InitializeParams
	if err := unmarshalParams(req, &p); err != nil {
		return nil, err
	}
	version := p.ProtocolVersion
	if !isLegacy(version) {
		// Answer with the newest legacy revision; the client decides
		// whether it can speak it.
		version = LatestLegacyVersion
	}
	c := req.conn
	c.mu.Lock()
	c.initialized = true
	c.version = version
	c.caps = &p.Capabilities
	c.clientInfo = &p.ClientInfo
	c.mu.Unlock()
	return &InitializeResult{
		ProtocolVersion: version,
		Capabilities:    s.capabilities(),
		ServerInfo:      s.Info,
		Instructions:    s.Instructions,
	}, nil
}

func (s *Server) discover(req *request) (any, error) {
	var p Params
	if err := unmarshalParams(req, &p); err != nil {
		return nil, err
	}
	if p.Meta != nil && p.Meta.ProtocolVersion != "" {
		if err := req.resolve(&p, true); err != nil {
			return nil, err
		}
	}
	// Discovery is modern by nature: answer in the modern shape.
	req.modern = true
	info := s.Info
	return &DiscoverResult{
		SupportedVersions: SupportedVersions(),
		Capabilities:      s.capabilities(),
		ServerInfo:        &info,
		Instructions:      s.Instructions,
	}, nil
}

// listPage decodes a list request and returns the page of the list that
// its cursor asks for, with the cursor of the next page ("" at the end).
func listPage[T any](s *Server, req *request, list func() []T) (page []T, next string, err error) {
	var p PaginatedParams
	if err := decode(req, &p); err != nil {
		return nil, "", err
	}
	all := list()
	start, end, next, err := s.page(p.Cursor, len(all))
	if err != nil {
		return nil, "", err
	}
	return all[start:end], next, nil
}

func (s *Server) listTools(req *request) (any, error) {
	list := s.tools.Tools
	if f := s.ToolFilter; f != nil {
		list = func() []tool.Tool { return f(req, s.tools.Tools()) }
	}
	tools, next, err := listPage(s, req, list)
	if err != nil {
		return nil, err
	}
	res := &ListToolsResult{Tools: make([]tool.Info, len(tools)), NextCursor: next}
	for i, t := range tools {
		res.Tools[i] = t.Info()
	}
	return res, nil
}

// callTool routes tools/call by name through the server's registry, which
// runs the argument pipeline and the middleware. An error a model can act
// on (bad arguments, a tool's own error or panic) is a result with isError
// set, so the model reads it; an unknown tool, malformed params and fatal
// errors (see tool.ErrFatal) are protocol errors.
func (s *Server) callTool(ctx context.Context, req *request) (any, error) {
	var p CallToolParams
	if err := p.decode(req); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for tools/call: name is missing")
	}
	if err := req.setSubject(p.Name); err != nil {
		return nil, err
	}
	if s.Caller != nil {
		c := s.Caller(ctx, req.info())
		req.caller = &c
	}
	if s.Inject != nil {
		values, err := s.Inject(ctx, req.info())
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				return nil, rpcErr
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tool %s: the server's Inject failed: %v", p.Name, err)
		}
		ctx = tool.WithInjected(ctx, values)
	}
	if t, ok := s.tools.Lookup(p.Name); ok {
		if support := taskSupport(t); support != "" {
			tp := p // on the heap only here: a task's goroutine keeps it
			return s.callToolTask(ctx, req, &tp, support)
		}
	}
	res, err := s.tools.Call(ctx, p.Name, p.Arguments)
	out, err := s.toolOutcome(ctx, p.Name, res, err, &req.responseParts().toolResult)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// toolOutcome turns what the registry returned for a call of tool name
// into the call's result, written to out, or its protocol error.
func (s *Server) toolOutcome(ctx context.Context, name string, res *tool.Result, err error, out *CallToolResult) (*CallToolResult, error) {
	if err != nil {
		var rpcErr *jsonrpc.Error
		var unknown *tool.UnknownToolError
		var panicked *tool.PanicError
		switch {
		case errors.As(err, &unknown) && unknown.Gone != nil:
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%v", err)
		case errors.As(err, &unknown):
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool %q: call tools/list for the tools this server has", name)
		case errors.Is(err, ErrInputRequired) || errors.As(err, &rpcErr):
			return nil, err
		case ctx.Err() != nil:
			return nil, context.Cause(ctx)
		case errors.Is(err, tool.ErrFatal):
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tool %s: %v", name, err)
		case errors.As(err, &panicked):
			s.logger().Error("mcp: tool panicked", "tool", panicked.Tool, "panic", panicked.Value, "stack", string(panicked.Stack))
		}
		res = tool.ErrorResult(err)
	}
	if res == nil {
		res = &tool.Result{}
	}
	*out = CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError, ResultBase: ResultBase{Meta: res.Meta}}
	return out, nil
}

func (s *Server) listResources(req *request) (any, error) {
	page, next, err := listPage(s, req, func() []Resource {
		s.mu.RLock()
		defer s.mu.RUnlock()
		all := make([]Resource, len(s.resOrder))
		for i, uri := range s.resOrder {
			all[i] = s.resources[uri].res
		}
		return all
	})
	if err != nil {
		return nil, err
	}
	return &ListResourcesResult{Resources: page, NextCursor: next}, nil
}

func (s *Server) listTemplates(req *request) (any, error) {
	page, next, err := listPage(s, req, func() []ResourceTemplate {
		s.mu.RLock()
		defer s.mu.RUnlock()
		all := make([]ResourceTemplate, len(s.templates))
		for i, t := range s.templates {
			all[i] = t.tmpl
		}
		return all
	})
	if err != nil {
		return nil, err
	}
	return &ListResourceTemplatesResult{ResourceTemplates: page, NextCursor: next}, nil
}

// findResource returns the handler for a URI: a fixed resource, else the
// first template that matches.
func (s *Server) findResource(uri string) ResourceHandler {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.resources[uri]; ok {
		return e.h
	}
	for _, t := range s.templates {
		if t.re.MatchString(uri) {
			return t.h
		}
	}
	return nil
}

// TemplateVars returns the variables of uri matched against an RFC 6570
// template, or nil if it does not match.
func TemplateVars(template, uri string) map[string]string {
	re, err := compileTemplate(template)
	if err != nil {
		return nil
	}
	m := re.FindStringSubmatch(uri)
	if m == nil {
		return nil
	}
	vars := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name != "" {
			vars[name] = m[i]
		}
	}
	return vars
}

func (s *Server) resourceNotFound(req *request, uri string) *jsonrpc.Error {
	code := CodeResourceNotFound
	if req.modern {
		code = jsonrpc.CodeInvalidParams
	}
	return jsonrpc.NewError(code, "Resource not found: %s", uri).WithData(map[string]string{"uri": uri})
}

func (s *Server) readResource(ctx context.Context, req *request) (any, error) {
	var p ReadResourceParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for resources/read: uri is missing")
	}
	if err := req.setSubject(p.URI); err != nil {
		return nil, err
	}
	h := s.findResource(p.URI)
	if h == nil {
		return nil, s.resourceNotFound(req, p.URI)
	}
	contents, err := h(ctx, p.URI)
	if err != nil {
		if errors.Is(err, ErrResourceNotFound) {
			return nil, s.resourceNotFound(req, p.URI)
		}
		return nil, err
	}
	if contents == nil {
		contents = []ResourceContents{}
	}
	return &ReadResourceResult{Contents: contents}, nil
}

func (s *Server) subscribe(req *request) (any, error) {
	var p ReadResourceParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if req.modern {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s is not part of protocol %s; use subscriptions/listen with resourceSubscriptions", req.method, req.version)
	}
	if p.URI == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for %s: uri is missing", req.method)
	}
	c := req.conn
	c.mu.Lock()
	if c.subs == nil {
		c.subs = map[string]bool{}
	}
	if req.method == MethodResourcesSubscribe {
		c.subs[p.URI] = true
	} else {
		delete(c.subs, p.URI)
	}
	c.mu.Unlock()
	return &EmptyResult{}, nil
}

func (s *Server) listPrompts(req *request) (any, error) {
	page, next, err := listPage(s, req, func() []Prompt {
		s.mu.RLock()
		defer s.mu.RUnlock()
		all := make([]Prompt, len(s.prOrder))
		for i, n := range s.prOrder {
			all[i] = s.prompts[n].p
		}
		return all
	})
	if err != nil {
		return nil, err
	}
	return &ListPromptsResult{Prompts: page, NextCursor: next}, nil
}

func (s *Server) getPrompt(ctx context.Context, req *request) (any, error) {
	var p GetPromptParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if err := req.setSubject(p.Name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e := s.prompts[p.Name]
	s.mu.RUnlock()
	if e == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt %q: call prompts/list for the prompts this server has", p.Name)
	}
	var missing []string
	for _, a := range e.p.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "prompt %q is missing required arguments: %s", p.Name, strings.Join(missing, ", "))
	}
	res, err := e.h(ctx, p.Arguments)
	if err != nil {
		return nil, err
	}
	if res.Messages == nil {
		res.Messages = []PromptMessage{}
	}
	return res, nil
}

func (s *Server) completion(ctx context.Context, req *request) (any, error) {
	var p CompleteParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	h := s.Completion
	if h == nil {
		return &CompleteResult{Completion: Completion{Values: []string{}}}, nil
	}
	if p.Ref.Type != "ref/prompt" && p.Ref.Type != "ref/resource" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params for completion/complete: ref.type must be "ref/prompt" or "ref/resource", got %q`, p.Ref.Type)
	}
	c, err := h(ctx, &p)
	if err != nil {
		return nil, err
	}
	if c == nil {
		c = &Completion{}
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(c.Values) > 100 {
		c.Values, c.HasMore = c.Values[:100], true
	}
	return &CompleteResult{Completion: *c}, nil
}

func (s *Server) setLevel(req *request) (any, error) {
	var p SetLevelParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if req.modern {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: logging/setLevel is not part of protocol %s; set %q in each request's _meta", req.version, MetaLogLevel)
	}
	if !p.Level.Valid() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params for logging/setLevel: unknown level %q (use debug, info, notice, warning, error, critical, alert or emergency)", p.Level)
	}
	req.conn.mu.Lock()
	req.conn.logLevel = p.Level
	req.conn.mu.Unlock()
	return &EmptyResult{}, nil
}

// supportsInputRequired reports whether a method may answer input_required.
func supportsInputRequired(method string) bool {
	return slices.Contains([]string{MethodToolsCall, MethodPromptsGet, MethodResourcesRead}, method)
}

// setSubject records what the request is about and checks that a
// requestState it carries was issued for the same thing.
func (r *request) setSubject(subject string) error {
	r.subject = subject
	if r.stateSubject != "" && r.stateSubject != subject {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState: it was issued for %q, not %q; retry the original request without requestState and inputResponses", r.stateSubject, subject)
	}
	return nil
}
