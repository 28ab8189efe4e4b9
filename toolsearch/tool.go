package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// ToolName is the name of the search tool (NewTool).
const ToolName = "search_tools"

// ToolInfo describes the search tool over ix to a model: how many tools
// it searches and from which servers, and that what it finds can be
// called from the model's next turn on. k is the number of tools a
// search returns by default (0: DefaultResults).
func ToolInfo(ix *Index, k int) tool.Info {
	if k <= 0 {
		k = DefaultResults
	}
	desc := fmt.Sprintf("Finds tools by what they do, among %d tools not all shown to you", ix.Len())
	if s := ix.Servers(); len(s) > 0 {
		desc += fmt.Sprintf(" (from the servers %s; their tools are named server__tool)", strings.Join(s, ", "))
	}
	desc += ". Search before saying a task cannot be done. Describe the action in a few words, e.g. \"read a file\" or \"convert time zones\"; the tools found can be called from your next turn on."
	schema := fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"What the tool should do, in a few words, or a tool's name."},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"How many tools to return (default %d)."}},"required":["query"]}`,
		MaxResults, k)
	yes, no := true, false
	return tool.Info{Name: ToolName, Description: desc, InputSchema: json.RawMessage(schema),
		Annotations: &tool.Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}}
}

// NewTool makes the search tool (described by ToolInfo): each call
// searches the index that index returns (called once per call, so it
// may follow changing tools) and hands the tools found to found, which
// loads them for the caller (an agent sends them to its model, a gateway
// lists them to its client); its result is Answer's text, and the names
// and scores as structured content.
func NewTool(index func() *Index, k int, found func(ctx context.Context, hits []Hit)) tool.Tool {
	return tool.NewFunc(ToolInfo(index(), k), func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		var in struct {
			Query *string `json:"query"`
			Limit int     `json:"limit"`
		}
		if err := json.Unmarshal(args, &in); err != nil || in.Query == nil {
			return tool.Errorf(`%s takes {"query": "what the tool should do"}; the arguments were %s`, ToolName, shorten(string(args), 200)), nil
		}
		if in.Limit <= 0 {
			in.Limit = k
		}
		a := index().Answer(*in.Query, in.Limit)
		if found != nil && len(a.Hits) > 0 {
			found(ctx, a.Hits)
		}
		res := tool.Text(a.Text)
		res.StructuredContent = map[string]any{"tools": append([]Hit{}, a.Hits...)}
		return res, nil
	})
}
