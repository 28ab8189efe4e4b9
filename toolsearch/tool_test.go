package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsearch"
)

func infos() []tool.Info {
	return []tool.Info{
		{Name: "files__read_file", Description: "Reads a file as text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "files__write_file", Description: "Writes text to a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)},
		{Name: "clock__now", Description: "The time now in a time zone."},
	}
}

func TestTool(t *testing.T) {
	ix := toolsearch.New(infos())
	var found []string
	st := toolsearch.NewTool(func() *toolsearch.Index { return ix }, 1, func(_ context.Context, hits []toolsearch.Hit) {
		for _, h := range hits {
			found = append(found, h.Name)
		}
	})
	info := st.Info()
	if info.Name != toolsearch.ToolName || !strings.Contains(info.Description, "among 3 tools") || !strings.Contains(info.Description, "servers clock, files") ||
		!strings.Contains(string(info.InputSchema), `(default 1)`) {
		t.Errorf("Info: %+v %s", info, info.InputSchema)
	}
	tests := []struct {
		args    string
		isError bool
		text    string
		found   []string
	}{
		{`{"query":"read a file"}`, false, "1 of 3 tools match", []string{"files__read_file"}},
		{`{"query":"file","limit":2}`, false, "2 of 3 tools match", []string{"files__read_file", "files__write_file"}},
		{`{"query":"zebra"}`, false, `No tool matches "zebra"`, nil},
		{`{}`, true, `search_tools takes {"query": "what the tool should do"}; the arguments were {}`, nil},
		{`{"query":7}`, true, `the arguments were {"query":7}`, nil},
	}
	for _, tt := range tests {
		found = nil
		res, err := st.Call(context.Background(), json.RawMessage(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		v := res.ForModel()
		if v.IsError != tt.isError || !strings.Contains(v.Text, tt.text) || fmt.Sprint(found) != fmt.Sprint(tt.found) {
			t.Errorf("%s: error %v, found %v, text:\n%s", tt.args, v.IsError, found, v.Text)
		}
		if !tt.isError {
			b, _ := json.Marshal(res.StructuredContent)
			if !strings.HasPrefix(string(b), `{"tools":[`) {
				t.Errorf("%s: structured content %s", tt.args, b)
			}
		}
	}
}

// A gateway or agent of your own indexes its tools, offers the search
// tool, and loads what it finds.
func ExampleNewTool() {
	ix := toolsearch.New(infos())
	search := toolsearch.NewTool(func() *toolsearch.Index { return ix }, 2, func(_ context.Context, hits []toolsearch.Hit) {
		for _, h := range hits {
			fmt.Println("load", h.Name)
		}
	})
	res, _ := search.Call(context.Background(), json.RawMessage(`{"query":"write text to a file"}`))
	fmt.Print(res.ForModel().Text)
	// Output:
	// load files__write_file
	// load files__read_file
	// 2 of 3 tools match; they can be called now:
	// - files__write_file: Writes text to a file. (parameters: content, path)
	// - files__read_file: Reads a file as text. (parameters: path)
}

func ExampleIndex_Search() {
	ix := toolsearch.New(infos())
	for _, h := range ix.Search("what time is it", 3) {
		fmt.Println(h.Name)
	}
	// Output:
	// clock__now
}
