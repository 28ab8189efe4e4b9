package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// ErrInputRequired is returned by Elicit, CreateMessage and ListRoots (and
// so by tool.Elicit and tool.Sample while serving a request) when a modern
// (2026-07-28) client must supply the answer on a retry of the request. A handler returns it (wrapped or joined with others) unchanged;
// the server then answers with an input_required result listing every
// question asked so far, and calls the handler again, from the start, when
// the client retries with the answers. Handlers must therefore ask their
// questions in the same order on every run.
var ErrInputRequired = errors.New("input required from the client")

// RequestInfo describes the request a handler is serving.
type RequestInfo struct {
	// Method is the MCP method, e.g. "tools/call".
	Method string
	// ProtocolVersion is the revision the request speaks.
	ProtocolVersion string
	// Modern is true for stateless (2026-07-28) requests.
	Modern bool
	// ClientInfo identifies the client, when it said. It is shared by
	// the session's requests: read it, do not modify it.
	ClientInfo *Implementation
	// ClientCapabilities are the client's capabilities for this request,
	// shared like ClientInfo.
	ClientCapabilities *ClientCapabilities
	// Caller is who the request is made for (see Server.Caller).
	Caller tool.Caller
	// WantsProgress says the client asked for progress (a progressToken
	// in _meta): a handler that relays the request elsewhere asks for
	// progress there only then.
	WantsProgress bool
}

// Request returns what is known about the request ctx belongs to; ok is
// false outside a request handler.
func Request(ctx context.Context) (info RequestInfo, ok bool) {
	r := requestFrom(ctx)
	if r == nil {
		return RequestInfo{}, false
	}
	return r.info(), true
}

// info describes the request.
func (r *request) info() RequestInfo {
	return RequestInfo{Method: r.method, ProtocolVersion: r.version, Modern: r.modern, ClientInfo: r.clientInfo, ClientCapabilities: r.caps, Caller: r.callerOf(), WantsProgress: len(r.progressToken) > 0}
}

// Progress reports progress of the request to the client, if it asked for
// progress (a progressToken in _meta); otherwise it does nothing. It makes
// the request a tool.Client: handlers call tool.Progress.
func (r *request) Progress(_ context.Context, progress, total float64, message string) error {
	if len(r.progressToken) == 0 {
		return nil
	}
	p := ProgressParams{ProgressToken: r.progressToken, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	m, err := jsonrpc.NewNotification(NotificationProgress, p)
	if err != nil {
		return err
	}
	return r.out.send(m)
}

// Log sends a log message about the request to the client, when the
// client asked for messages of that level: by logging/setLevel (legacy;
// all levels until then) or by the logLevel in the request's _meta
// (modern; none without it). Handlers call tool.Log.
func (r *request) Log(_ context.Context, level tool.LogLevel, logger string, data any) error {
	l := LoggingLevel(level)
	if r.logLevel == "" || levelRank[l] < levelRank[r.logLevel] {
		return nil
	}
	m, err := jsonrpc.NewNotification(NotificationMessage, LoggingMessageParams{Level: l, Logger: logger, Data: data})
	if err != nil {
		return err
	}
	return r.out.send(m)
}

// Elicit asks the client's user to fill in a form: tool.Elicit while
// serving a request. See ErrInputRequired for how a modern client answers.
func (r *request) Elicit(ctx context.Context, e *tool.Elicitation) (*tool.ElicitResult, error) {
	res, err := Elicit(ctx, &ElicitParams{Mode: "form", Message: e.Message, RequestedSchema: e.Schema})
	if err != nil {
		return nil, err
	}
	return &tool.ElicitResult{Action: res.Action, Content: res.Content}, nil
}

// Sample asks the client's LLM for a completion: tool.Sample while serving
// a request. See ErrInputRequired for how a modern client answers.
func (r *request) Sample(ctx context.Context, s *tool.Sampling) (*tool.SamplingResult, error) {
	p := &CreateMessageParams{SystemPrompt: s.System, MaxTokens: s.MaxTokens, Messages: make([]SamplingMessage, len(s.Messages))}
	for i, m := range s.Messages {
		c, err := json.Marshal(m.Content)
		if err != nil {
			return nil, fmt.Errorf("sampling message %d: %w", i, err)
		}
		p.Messages[i] = SamplingMessage{Role: Role(m.Role), Content: c}
	}
	res, err := CreateMessage(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &tool.SamplingResult{Role: string(res.Role), Model: res.Model, StopReason: res.StopReason}
	if err := json.Unmarshal(res.Content, &out.Content); err != nil {
		return nil, fmt.Errorf("the client's sampling answer holds no single content block (%w): call mcp.CreateMessage for answers with several", err)
	}
	return out, nil
}

// Elicit asks the client's user for input. See ErrInputRequired for how a
// modern client answers. Handlers that ask with a form call tool.Elicit,
// which works in-process too; Elicit is for what only MCP has (a URL to
// visit, _meta).
func Elicit(ctx context.Context, p *ElicitParams) (*ElicitResult, error) {
	var res ElicitResult
	err := askClient(ctx, MethodElicit, p, &res, func(c *ClientCapabilities) bool { return c.Elicitation != nil })
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// CreateMessage asks the client's LLM for a completion (sampling). See
// ErrInputRequired for how a modern client answers. Handlers that send a
// conversation call tool.Sample, which works in-process too;
// CreateMessage is for what only MCP has (model preferences, tools,
// context inclusion, _meta).
func CreateMessage(ctx context.Context, p *CreateMessageParams) (*CreateMessageResult, error) {
	var res CreateMessageResult
	err := askClient(ctx, MethodCreateMessage, p, &res, func(c *ClientCapabilities) bool { return c.Sampling != nil })
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots. See ErrInputRequired for how a
// modern client answers.
func ListRoots(ctx context.Context) (*ListRootsResult, error) {
	var res ListRootsResult
	err := askClient(ctx, MethodListRoots, struct{}{}, &res, func(c *ClientCapabilities) bool { return c.Roots != nil })
	if err != nil {
		return nil, err
	}
	if res.Roots == nil {
		res.Roots = []Root{}
	}
	return &res, nil
}

type inputKeyKey struct{}

// WithInputKey names the answer the next Elicit, CreateMessage or ListRoots
// made with the returned context asks a modern client for: the key of its
// entry in inputRequests and inputResponses. Without a name, questions are
// keyed by kind and order ("elicitation-1", "sampling-2", ...).
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKeyKey{}, key)
}

var inputKeyPrefix = map[string]string{
	MethodElicit:        "elicitation",
	MethodCreateMessage: "sampling",
	MethodListRoots:     "roots",
}

// askClient puts a question to the client: as a server-to-client request in
// the legacy era, as an input request of an input_required result in the
// modern one.
func askClient(ctx context.Context, method string, params any, out any, supported func(*ClientCapabilities) bool) error {
	if run := runFrom(ctx); run != nil {
		return run.ask(ctx, method, params, out, supported)
	}
	r := requestFrom(ctx)
	if r == nil {
		return fmt.Errorf("%s can only be called while serving a request", method)
	}
	return askRequest(ctx, r, method, params, out, supported)
}

// askRequest puts a question to the client of request r.
func askRequest(ctx context.Context, r *request, method string, params any, out any, supported func(*ClientCapabilities) bool) error {
	if r.caps == nil || !supported(r.caps) {
		return missingCapability(method)
	}
	if !r.modern {
		raw, err := r.conn.ask(ctx, r.out, method, params)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("the client's answer to %s is malformed: %w", method, err)
		}
		return nil
	}
	if !supportsInputRequired(r.method) {
		return fmt.Errorf("%s cannot ask the client for input during %s (only tools/call, prompts/get and resources/read can)", method, r.method)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	key, _ := ctx.Value(inputKeyKey{}).(string)
	if key == "" {
		key = inputKeyPrefix[method] + "-" + strconv.Itoa(r.seq)
	}
	if raw, ok := r.responses[key]; ok {
		if len(raw) == 0 || raw[0] != '{' {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses[%q] must be the %s result object, got %s", key, method, raw)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses[%q] is not a valid %s result: %v", key, method, err)
		}
		return nil
	}
	b, err := jsonrpc.Marshal(params)
	if err != nil {
		return err
	}
	if r.asked == nil {
		r.asked = map[string]InputRequest{}
	}
	r.asked[key] = InputRequest{Method: method, Params: b}
	return ErrInputRequired
}

func missingCapability(method string) error {
	capName := map[string]string{MethodElicit: "elicitation", MethodCreateMessage: "sampling", MethodListRoots: "roots"}[method]
	return capabilityError{jsonrpc.NewError(CodeMissingRequiredClientCapability, "the client did not declare the %s capability that %s needs", capName, method).
		WithData(map[string]any{"requiredCapabilities": map[string]any{capName: map[string]any{}}})}
}

// capabilityError is the protocol error of a question the client cannot
// answer; it is also errors.ErrUnsupported, as tool.Client says, so that
// the registry asking for missing arguments leaves the call's error as it
// was.
type capabilityError struct{ rpc *jsonrpc.Error }

func (e capabilityError) Error() string   { return e.rpc.Error() }
func (e capabilityError) Unwrap() []error { return []error{e.rpc, errors.ErrUnsupported} }

// State returns the application state a handler saved with SetState on an
// earlier round of a multi round-trip request; nil on the first round.
func State(ctx context.Context) json.RawMessage {
	if r := requestFrom(ctx); r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.appState
	}
	return nil
}

// SetState saves application state to be handed back, integrity-protected,
// when the client retries an input_required request.
func SetState(ctx context.Context, v any) error {
	r := requestFrom(ctx)
	if r == nil {
		return errors.New("SetState can only be called while serving a request")
	}
	b, err := jsonrpc.Marshal(v)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.appState = b
	r.mu.Unlock()
	return nil
}

// CloseSSEStream ends the HTTP response stream of the current request early,
// when the client can resume it: a legacy (2025-11-25) Streamable HTTP
// client reconnects with Last-Event-ID and receives everything sent since,
// including the eventual result. Long-running handlers use it to free the
// connection while they work. It reports whether the stream was closed; on
// other transports it does nothing.
func CloseSSEStream(ctx context.Context) bool {
	r := requestFrom(ctx)
	if r == nil {
		return false
	}
	c, ok := r.out.(interface{ closeStream() bool })
	return ok && c.closeStream()
}
