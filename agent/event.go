package agent

import (
	"encoding/json"
	"time"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/tool"
)

// EventType says what an Event reports.
type EventType string

// Event types.
const (
	// EventText is a piece of the model's answer (Text).
	EventText EventType = "text"
	// EventReasoning is a piece of the model's reasoning (Text).
	EventReasoning EventType = "reasoning"
	// EventToolStart is a tool call about to run (CallID, Tool, Args).
	EventToolStart EventType = "tool_start"
	// EventToolEnd is a tool call that finished (CallID, Tool, Duration,
	// IsError, Err, ResultSize).
	EventToolEnd EventType = "tool_end"
	// EventUsage is the usage of one model request (Turn, Usage).
	EventUsage EventType = "usage"
	// EventAnswer is the final answer (Text).
	EventAnswer EventType = "answer"
	// EventProgress is a running tool's progress (CallID, Tool, Progress,
	// Total when known, Text): tool.Progress.
	EventProgress EventType = "progress"
	// EventLog is a running tool's log message (CallID, Tool, Level,
	// Logger, Data): tool.Log.
	EventLog EventType = "log"
)

// Event is something that happened in a run, for a UI or a log. It
// encodes as one JSON object (toolwire run --json prints a line each).
type Event struct {
	Type       EventType       `json:"type"`
	Text       string          `json:"text,omitempty"`
	CallID     string          `json:"call_id,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Duration   time.Duration   `json:"duration_ns,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	Err        string          `json:"error,omitempty"`
	ResultSize int             `json:"result_size,omitempty"`
	Turn       int             `json:"turn,omitempty"`
	Usage      model.Usage     `json:"usage,omitzero"`
	Progress   float64         `json:"progress,omitempty"`
	Total      float64         `json:"total,omitempty"`
	Level      tool.LogLevel   `json:"level,omitempty"`
	Logger     string          `json:"logger,omitempty"`
	Data       any             `json:"data,omitempty"`
}
