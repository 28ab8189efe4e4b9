package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// Protocol revisions this package speaks.
const (
	// Version20260728 is the modern, stateless revision.
	Version20260728 = "2026-07-28"
	// Version20251125 is the last legacy (initialize handshake) revision.
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"

	// LatestVersion is the newest revision.
	LatestVersion = Version20260728
	// LatestLegacyVersion is the newest revision with an initialize handshake.
	LatestLegacyVersion = Version20251125
)

// ModernVersions are the stateless revisions, newest first.
var modernVersions = []string{Version20260728}

// legacyVersions are the handshake revisions, newest first.
var legacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// SupportedVersions returns every revision this package speaks, newest first.
func SupportedVersions() []string {
	return append(append([]string(nil), modernVersions...), legacyVersions...)
}

// IsModern reports whether a revision is a stateless (per-request _meta) one.
func IsModern(v string) bool {
	for _, m := range modernVersions {
		if v == m {
			return true
		}
	}
	return false
}

func isLegacy(v string) bool {
	for _, l := range legacyVersions {
		if v == l {
			return true
		}
	}
	return false
}

// MCP error codes beyond JSON-RPC's own.
const (
	// CodeResourceNotFound is the legacy (2025-11-25 and earlier) code for an
	// unknown resource; modern revisions use jsonrpc.CodeInvalidParams.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired is 2025-11-25's URL elicitation error.
	CodeURLElicitationRequired = -32042
	// CodeHeaderMismatch: HTTP headers do not match the body.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a capability the
	// client did not declare.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the request's revision is not served.
	CodeUnsupportedProtocolVersion = -32022
)

// _meta keys defined by the 2026-07-28 revision.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Result types of the 2026-07-28 revision.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// Method names.
const (
	MethodInitialize            = "initialize"
	MethodPing                  = "ping"
	MethodDiscover              = "server/discover"
	MethodToolsList             = "tools/list"
	MethodToolsCall             = "tools/call"
	MethodResourcesList         = "resources/list"
	MethodResourcesRead         = "resources/read"
	MethodResourceTemplatesList = "resources/templates/list"
	MethodResourcesSubscribe    = "resources/subscribe"
	MethodResourcesUnsubscribe  = "resources/unsubscribe"
	MethodPromptsList           = "prompts/list"
	MethodPromptsGet            = "prompts/get"
	MethodComplete              = "completion/complete"
	MethodSetLevel              = "logging/setLevel"
	MethodSubscriptionsListen   = "subscriptions/listen"
	MethodCreateMessage         = "sampling/createMessage"
	MethodElicit                = "elicitation/create"
	MethodListRoots             = "roots/list"

	NotificationInitialized               = "notifications/initialized"
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationToolsListChanged          = "notifications/tools/list_changed"
	NotificationResourcesListChanged      = "notifications/resources/list_changed"
	NotificationPromptsListChanged        = "notifications/prompts/list_changed"
	NotificationResourceUpdated           = "notifications/resources/updated"
	NotificationRootsListChanged          = "notifications/roots/list_changed"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	NotificationElicitationComplete       = "notifications/elicitation/complete"
)

// Implementation names a client or server program.
type Implementation struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Version     string      `json:"version"`
	Description string      `json:"description,omitempty"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Icons       []tool.Icon `json:"icons,omitempty"`
}

// ClientCapabilities are what a client supports.
type ClientCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Roots        *RootsCapability           `json:"roots,omitempty"`
	Sampling     *SamplingCapability        `json:"sampling,omitempty"`
	Elicitation  *ElicitationCapability     `json:"elicitation,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability is present when the client can list roots.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability is present when the client can sample from an LLM.
type SamplingCapability struct {
	Context json.RawMessage `json:"context,omitempty"`
	Tools   json.RawMessage `json:"tools,omitempty"`
}

// ElicitationCapability is present when the client can ask its user.
// Neither mode set means form mode only.
type ElicitationCapability struct {
	Form json.RawMessage `json:"form,omitempty"`
	URL  json.RawMessage `json:"url,omitempty"`
}

// ServerCapabilities are what a server offers.
type ServerCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Logging      *struct{}                  `json:"logging,omitempty"`
	Completions  *struct{}                  `json:"completions,omitempty"`
	Prompts      *ListChangedCapability     `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListChangedCapability     `json:"tools,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
	// Tasks is 2025-11-25's task support, which clients read; this
	// server offers tasks as the Tasks extension instead.
	Tasks json.RawMessage `json:"tasks,omitempty"`
}

// ListChangedCapability says whether list_changed notifications are sent.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability describes resource support.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// RequestMeta is the _meta of a request: the progress token and, in
// modern requests, the protocol version, client capabilities, client info
// and log level; the W3C trace context a client sends (see Telemetry).
// Other keys are not kept.
type RequestMeta struct {
	ProgressToken      json.RawMessage     `json:"progressToken,omitempty"`
	ProtocolVersion    string              `json:"io.modelcontextprotocol/protocolVersion,omitempty"`
	ClientInfo         *Implementation     `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities,omitempty"`
	LogLevel           LoggingLevel        `json:"io.modelcontextprotocol/logLevel,omitempty"`
	// Traceparent, Tracestate and Baggage are the W3C trace context of
	// the request, which a Client puts here from its context. A Server
	// reads the trace context from the request as it came, not from here.
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	Baggage     string `json:"baggage,omitempty"`

	// traceOf, when set, is the meta this one copies, adding only the
	// trace context: it is encoded as traceOf's encoding and the trace
	// members.
	traceOf *RequestMeta
}

// sameBut reports whether m is base but for its trace context.
func (m *RequestMeta) sameBut(base *RequestMeta) bool {
	return m.ProgressToken == nil && base.ProgressToken == nil && m.ProtocolVersion == base.ProtocolVersion &&
		m.ClientInfo == base.ClientInfo && m.ClientCapabilities == base.ClientCapabilities && m.LogLevel == base.LogLevel
}

// traceOnly reports whether m carries a trace context and nothing else.
func (m *RequestMeta) traceOnly() bool {
	return m.ProgressToken == nil && m.ProtocolVersion == "" && m.ClientInfo == nil &&
		m.ClientCapabilities == nil && m.LogLevel == "" && m.traceOf == nil &&
		(m.Traceparent != "" || m.Tracestate != "" || m.Baggage != "")
}

// Params is embedded in every request's params: its _meta, and the
// multi-round-trip members a retried request carries.
type Params struct {
	Meta           *RequestMeta   `json:"_meta,omitempty"`
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   string         `json:"requestState,omitempty"`
}

func (p *Params) params() *Params { return p }

// ResultBase is embedded in every result: its _meta and, for modern
// clients, its result type.
type ResultBase struct {
	Meta       map[string]any `json:"_meta,omitempty"`
	ResultType string         `json:"resultType,omitempty"`
}

func (r *ResultBase) base() *ResultBase { return r }

// Cacheable is embedded in results a modern client may cache.
type Cacheable struct {
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

func (c *Cacheable) cacheable() *Cacheable { return c }

// InitializeParams opens a legacy session.
type InitializeParams struct {
	Params
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult answers initialize.
type InitializeResult struct {
	ResultBase
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// DiscoverResult answers server/discover.
type DiscoverResult struct {
	ResultBase
	Cacheable
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	ServerInfo        *Implementation    `json:"serverInfo,omitempty"`
	Instructions      string             `json:"instructions,omitempty"`
}

// EmptyResult is a result with no members.
type EmptyResult struct {
	ResultBase
}

// PaginatedParams are the params of list requests.
type PaginatedParams struct {
	Params
	Cursor string `json:"cursor,omitempty"`
}

// ToolAnnotations are hints about a tool.
type ToolAnnotations = tool.Annotations

// Content is a content block.
type Content = tool.Content

// Resource describes a readable resource.
type Resource = tool.Resource

// ResourceContents is what resources/read returns.
type ResourceContents = tool.ResourceContents

// ListToolsResult answers tools/list.
type ListToolsResult struct {
	ResultBase
	Cacheable
	Tools      []tool.Info `json:"tools"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Params
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// CallToolResult answers tools/call.
type CallToolResult struct {
	ResultBase
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`

	// task is the CreateTaskResult a server answered with in its stead
	// (resultType "task"), which CallTool follows to the result.
	task json.RawMessage
}

// ToolResult returns the call's result as a tool.Result. The server's
// identity that a 2026-07-28 result carries in _meta (MetaServerInfo) is
// left out: it tells of the session, not of the tool's result, and a
// result passed on (by the gateway, say) would otherwise claim the wrong
// server.
func (r *CallToolResult) ToolResult() *tool.Result {
	return &tool.Result{Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError, Meta: withoutServerInfo(r.Meta)}
}

// withoutServerInfo returns meta without MetaServerInfo: meta itself when
// it has none, nil when nothing else is left, else a copy.
func withoutServerInfo(meta map[string]any) map[string]any {
	if _, ok := meta[MetaServerInfo]; !ok {
		return meta
	}
	if len(meta) == 1 {
		return nil
	}
	m := make(map[string]any, len(meta)-1)
	for k, v := range meta {
		if k != MetaServerInfo {
			m[k] = v
		}
	}
	return m
}

// ResourceTemplate describes a family of resources by URI template.
type ResourceTemplate struct {
	URITemplate string                   `json:"uriTemplate"`
	Name        string                   `json:"name"`
	Title       string                   `json:"title,omitempty"`
	Description string                   `json:"description,omitempty"`
	MimeType    string                   `json:"mimeType,omitempty"`
	Annotations *tool.ContentAnnotations `json:"annotations,omitempty"`
	Icons       []tool.Icon              `json:"icons,omitempty"`
	Meta        map[string]any           `json:"_meta,omitempty"`
}

// ListResourcesResult answers resources/list.
type ListResourcesResult struct {
	ResultBase
	Cacheable
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// ListResourceTemplatesResult answers resources/templates/list.
type ListResourceTemplatesResult struct {
	ResultBase
	Cacheable
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitempty"`
}

// ReadResourceParams are the params of resources/read (and the legacy
// subscribe and unsubscribe).
type ReadResourceParams struct {
	Params
	URI string `json:"uri"`
}

// ReadResourceResult answers resources/read.
type ReadResourceResult struct {
	ResultBase
	Cacheable
	Contents []ResourceContents `json:"contents"`
}

// Prompt describes a prompt template.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []tool.Icon      `json:"icons,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ListPromptsResult answers prompts/list.
type ListPromptsResult struct {
	ResultBase
	Cacheable
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Params
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult answers prompts/get.
type GetPromptResult struct {
	ResultBase
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Params
	Ref      CompleteRef `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context,omitempty"`
}

// CompleteRef names what is being completed: a prompt ("ref/prompt", Name)
// or a resource template ("ref/resource", URI).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// Completion is the answer of a completion handler.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult answers completion/complete.
type CompleteResult struct {
	ResultBase
	Completion Completion `json:"completion"`
}

// LoggingLevel is a syslog severity.
type LoggingLevel string

// The logging levels, least severe first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

var levelRank = map[LoggingLevel]int{
	LevelDebug: 0, LevelInfo: 1, LevelNotice: 2, LevelWarning: 3,
	LevelError: 4, LevelCritical: 5, LevelAlert: 6, LevelEmergency: 7,
}

// Valid reports whether l is one of the eight levels.
func (l LoggingLevel) Valid() bool { _, ok := levelRank[l]; return ok }

// SetLevelParams are the params of the legacy logging/setLevel.
type SetLevelParams struct {
	Params
	Level LoggingLevel `json:"level"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Meta   map[string]any `json:"_meta,omitempty"`
	Level  LoggingLevel   `json:"level"`
	Logger string         `json:"logger,omitempty"`
	Data   any            `json:"data"`
}

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	Meta          map[string]any  `json:"_meta,omitempty"`
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	RequestID jsonrpc.ID `json:"requestId"`
	Reason    string     `json:"reason,omitempty"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	Meta map[string]any `json:"_meta,omitempty"`
	URI  string         `json:"uri"`
}

// SubscriptionFilter lists the notifications a subscriptions/listen stream
// opts in to.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs follow tasks of the Tasks extension (notifications/tasks).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// ListenParams are the params of subscriptions/listen.
type ListenParams struct {
	Params
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsAcknowledgedParams acknowledge a subscriptions/listen.
type SubscriptionsAcknowledgedParams struct {
	Meta          map[string]any     `json:"_meta,omitempty"`
	Notifications SubscriptionFilter `json:"notifications"`
}

// InputResponses are a client's answers to the inputRequests of an
// input_required result, by key.
type InputResponses map[string]json.RawMessage

// UnmarshalJSON accepts an object only.
func (r *InputResponses) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("inputResponses must be an object mapping input request keys to results, got %s", b)
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = m
	return nil
}

// InputRequest is one request of an input_required result, or a request a
// legacy server sends its client: sampling, elicitation or roots.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequiredResult asks the client to fulfil InputRequests and retry the
// original request with their results and RequestState.
type InputRequiredResult struct {
	ResultBase
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                  `json:"requestState,omitempty"`
}

// Role is who speaks a message.
type Role = string

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	Role    Role            `json:"role"`
	Content json.RawMessage `json:"content"`
}

// CreateMessageParams ask the client's LLM for a completion.
type CreateMessageParams struct {
	Meta             map[string]any    `json:"_meta,omitempty"`
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	Tools            json.RawMessage   `json:"tools,omitempty"`
	ToolChoice       json.RawMessage   `json:"toolChoice,omitempty"`
}

// CreateMessageResult is the client's LLM completion.
type CreateMessageResult struct {
	Meta       map[string]any  `json:"_meta,omitempty"`
	Role       Role            `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
}

// ElicitParams ask the client's user for input, by form or by URL.
type ElicitParams struct {
	Meta            map[string]any  `json:"_meta,omitempty"`
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// ElicitResult is the user's answer: action "accept", "decline" or
// "cancel", and the content of an accepted form.
type ElicitResult struct {
	Meta    map[string]any `json:"_meta,omitempty"`
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Root is a directory or file the client exposes.
type Root struct {
	URI  string         `json:"uri"`
	Name string         `json:"name,omitempty"`
	Meta map[string]any `json:"_meta,omitempty"`
}

// ListRootsResult is the client's roots.
type ListRootsResult struct {
	Meta  map[string]any `json:"_meta,omitempty"`
	Roots []Root         `json:"roots"`
}
