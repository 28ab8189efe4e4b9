package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/tool"
)

// TestAppendCallToolResult holds the direct encoder of tools/call results
// to what encoding/json writes for the same value.
func TestAppendCallToolResult(t *testing.T) {
	prio := 0.5
	tests := map[string]*CallToolResult{
		"empty":             {},
		"no content":        {Content: []tool.Content{}},
		"text":              {Content: []tool.Content{tool.TextContent("hello")}},
		"escapes":           {Content: []tool.Content{tool.TextContent("a\"b\\c\n\t\x01 <tag> & \u2028 \xff é 世界")}},
		"error":             {Content: []tool.Content{tool.TextContent("bad")}, IsError: true},
		"image and text":    {Content: []tool.Content{tool.ImageContent("aGk=", "image/png"), tool.TextContent("x")}},
		"annotated text":    {Content: []tool.Content{{Type: tool.TypeText, Text: "x", Annotations: &tool.ContentAnnotations{Priority: &prio}}}},
		"text with _meta":   {Content: []tool.Content{{Type: tool.TypeText, Text: "x", Meta: map[string]any{"k": 1.0}}}},
		"structured":        {Content: []tool.Content{tool.TextContent("{}")}, StructuredContent: map[string]any{"b": []any{1.0, "x"}, "a": nil}},
		"structured struct": {StructuredContent: struct{ N int }{3}},
		"modern":            {ResultBase: ResultBase{ResultType: ResultComplete, Meta: map[string]any{MetaServerInfo: Implementation{Name: "s", Version: "1"}}}, Content: []tool.Content{tool.TextContent("x")}},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			want, err := jsonrpc.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendCallToolResult(nil, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("appendCallToolResult:\n got %s\nwant %s", got, want)
			}
		})
	}
	bad := &CallToolResult{Content: []tool.Content{{Type: "video"}}}
	if _, err := appendCallToolResult(nil, bad, nil); err == nil {
		t.Error("a block of an unknown type encoded without error")
	}
}

// agreeReadCallToolResult checks readCallToolResult against json.Unmarshal.
func agreeReadCallToolResult(t *testing.T, raw []byte) {
	t.Helper()
	var want, got CallToolResult
	wantErr := json.Unmarshal(raw, &want)
	err := readCallToolResult(raw, &got)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("readCallToolResult(%s): %v; json.Unmarshal: %v", raw, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("readCallToolResult(%s):\n got %#v\nwant %#v", raw, got, want)
	}
}

func FuzzReadCallToolResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[],"isError":true}`,
		`{"content":null,"isError":null,"_meta":null,"resultType":null,"structuredContent":null}`,
		`{"content":[{"type":"text","text":"a\u00e9\n"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"structuredContent":{"n":1,"l":[true,null]}}`,
		`{"_meta":{"a":1},"_meta":{"b":2},"resultType":"complete","content":[{"text":"x","type":"text"}]}`,
		`{"Content":[{"type":"text","text":"x"}],"ISERROR":true}`,
		`{"content":[{"type":"text","text":"x","annotations":{"priority":0.5}}],"extra":1}`,
		`{"content":{},"isError":"yes"}`,
		`{"content":[1]}`, `{"structuredContent":1e400}`, `{"resultType":5}`, `[]`, `null`, `{"content":[{"type":"text"}]}`,
		`{"content":[{"type":"text","text":"x"}],"content":[{"type":"text","text":"y"},{"type":"text","text":"z"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // results come from jsonrpc.Decode, valid JSON
		}
		agreeReadCallToolResult(t, raw)
	})
}

// TestAppendCallToolParams holds the direct encoder of tools/call params
// to encoding/json, up to white space: it keeps the arguments' spaces, but
// never a line break, which would split a stdio message.
func TestAppendCallToolParams(t *testing.T) {
	for _, p := range []*CallToolParams{
		{Name: "echo"},
		{Name: "e\"cho\u2028", Arguments: json.RawMessage(`{"text":"hi"}`)},
		{Name: "x", Arguments: json.RawMessage(" {\n  \"a\": [1,\n 2],\r\n \"s\": \"x y\"\n}\n ")},
		{Name: "x", Arguments: json.RawMessage(`null`)},
		{Name: "x", Arguments: json.RawMessage(`{ "a" : [ 1, 2 ] }`)},
	} {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendCallToolParams(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, got); err != nil {
			t.Fatalf("appendCallToolParams wrote invalid JSON %s: %v", got, err)
		}
		if compact.String() != string(want) || bytes.ContainsAny(got, "\n\r") {
			t.Errorf("appendCallToolParams:\n got %s\nwant %s", got, want)
		}
	}
	if _, err := appendCallToolParams(nil, &CallToolParams{Name: "x", Arguments: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("invalid arguments encoded without error")
	}
}

// TestMarshalParamsWithMeta shows that tools/call params carrying the
// session's standard _meta are written as encoding/json writes them.
func TestMarshalParamsWithMeta(t *testing.T) {
	meta := &RequestMeta{ProtocolVersion: Version20260728, ClientCapabilities: &ClientCapabilities{}, ClientInfo: &Implementation{Name: "c<&>", Version: "1"}}
	metaJSON, err := jsonrpc.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*CallToolParams{
		{Params: Params{Meta: meta}, Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)},
		{Params: Params{Meta: meta}, Name: "none"},
		{Params: Params{Meta: &RequestMeta{ProtocolVersion: "x"}}, Name: "other meta"},
		{Params: Params{Meta: meta, RequestState: "s"}, Name: "retry"},
	} {
		want, err := jsonrpc.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalParams(p, meta, metaJSON)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("marshalParams(%s):\n got %s\nwant %s", p.Name, got, want)
		}
	}
}

// TestMarshalParamsTraceContext: a tools/call's _meta with a trace
// context is written as encoding/json writes it, on the fast paths (the
// session's _meta and the trace context; the trace context alone) and
// when the caller changed the copy of the session's _meta.
func TestMarshalParamsTraceContext(t *testing.T) {
	meta := &RequestMeta{ProtocolVersion: Version20260728, ClientCapabilities: &ClientCapabilities{}, ClientInfo: &Implementation{Name: "c", Version: "1"}}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	traced := func(tp, ts, bag string) *RequestMeta {
		m := *meta
		m.traceOf, m.Traceparent, m.Tracestate, m.Baggage = meta, tp, ts, bag
		return &m
	}
	changed := traced("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", "")
	changed.ProgressToken = json.RawMessage(`"tok"`)
	for _, m := range []*RequestMeta{
		traced("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", ""),
		traced("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=1,congo=\"2\"", "user=ada"),
		traced("", "", "user=ada"),
		{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Baggage: "a=b"},
		changed,
	} {
		p := &CallToolParams{Params: Params{Meta: m}, Name: "add", Arguments: json.RawMessage(`{"a":1}`)}
		got, err := marshalParams(p, meta, metaJSON)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(p)
		if string(got) != string(want) {
			t.Errorf("marshalParams:\n got %s\nwant %s", got, want)
		}
	}
}

// TestDecoratedToolResult holds a modern tool result's encoding, whose
// _meta decorate hands to the encoder instead of making a map, to what
// encoding/json writes for the result with the server's identity in its
// _meta map; and a result with a _meta of its own gets the identity there.
func TestDecoratedToolResult(t *testing.T) {
	srv := &Server{Info: Implementation{Name: "s", Title: "S \"quoted\"", Version: "1"}}
	infoMap := map[string]any{"name": "s", "title": "S \"quoted\"", "version": "1"}
	tests := map[string]struct {
		res      *CallToolResult
		wantMeta map[string]any
	}{
		"no _meta": {
			res:      &CallToolResult{Content: []tool.Content{tool.TextContent("x")}},
			wantMeta: map[string]any{MetaServerInfo: infoMap},
		},
		"own _meta": {
			res:      &CallToolResult{ResultBase: ResultBase{Meta: map[string]any{"k": "v"}}, Content: []tool.Content{tool.TextContent("x")}},
			wantMeta: map[string]any{"k": "v", MetaServerInfo: infoMap},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			meta := decorate(tt.res, srv, time.Minute)
			got, err := appendResult(nil, tt.res, meta)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonrpc.Marshal(&CallToolResult{
				ResultBase: ResultBase{ResultType: ResultComplete, Meta: tt.wantMeta},
				Content:    tt.res.Content,
			})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("decorated result:\n got %s\nwant %s", got, want)
			}
		})
	}
}
