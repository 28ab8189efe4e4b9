package spill

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/tool"
)

// fixture is a registry with Results installed, a tool that returns
// what the test sets, and a tool that echoes its arguments.
type fixture struct {
	reg    *tool.Registry
	res    *Results
	store  *handle.Memory
	result *tool.Result    // what "big" returns
	got    json.RawMessage // what "echo" got last
}

func newFixture(t *testing.T, r *Results) *fixture {
	t.Helper()
	f := &fixture{reg: &tool.Registry{}, res: r}
	if r.Store == nil {
		f.store = &handle.Memory{}
		r.Store = f.store
	}
	if r.Dirs == nil {
		r.Dirs = []string{t.TempDir()}
	}
	big := tool.NewFunc(tool.Info{Name: "big"}, func(context.Context, json.RawMessage) (*tool.Result, error) { return f.result, nil })
	echo := tool.NewFunc(tool.Info{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"text":{"type":"string","maxLength":10000000},
		"doc":{"type":"object","required":["items"]},
		"list":{"type":"array"},
		"count":{"type":"integer"},
		"any":{},
		"table":{"type":"string"},
		"edits":{"type":"array","items":{"type":"object","properties":{"newText":{"type":["string","null"]},"line":{"type":"integer"}}}}}}`)},
		func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			f.got = args
			return tool.Text("ok"), nil
		})
	if err := f.reg.Add(big, echo); err != nil {
		t.Fatal(err)
	}
	if err := r.Install(f.reg); err != nil {
		t.Fatal(err)
	}
	return f
}

var handleRe = regexp.MustCompile(`res_[A-Za-z0-9_-]{22}`)

// call calls name and returns what the model reads.
func (f *fixture) call(t *testing.T, ctx context.Context, name, args string) (string, error) {
	t.Helper()
	res, err := f.reg.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		return "", err
	}
	return res.ForModel().Text, nil
}

// keep makes "big" return res and calls it, returning the preview and
// the handle in it.
func (f *fixture) keep(t *testing.T, ctx context.Context, res *tool.Result) (string, string) {
	t.Helper()
	f.result = res
	text, err := f.call(t, ctx, "big", "{}")
	if err != nil {
		t.Fatal(err)
	}
	return text, handleRe.FindString(text)
}

func csvText(rows int) string {
	var b strings.Builder
	b.WriteString("id,name,price\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,item %d,%d.%02d\n", i, i, i%100, i%97)
	}
	return b.String()
}

func TestUnderBudgetUnchanged(t *testing.T) {
	f := newFixture(t, &Results{})
	for _, res := range []*tool.Result{
		tool.Text(strings.Repeat("x", DefaultBudget)),
		{Content: []tool.Content{tool.ImageContent(strings.Repeat("A", 4*DefaultBudget), "image/png")}},
		{StructuredContent: map[string]any{"a": strings.Repeat("y", DefaultBudget-20)}},
		{Content: []tool.Content{tool.TextContent(`{"a":"` + strings.Repeat("y", 10<<10) + `"}`)},
			StructuredContent: json.RawMessage(`{"a":"` + strings.Repeat("y", 10<<10) + `"}`)}, // each under the budget
	} {
		f.result = res
		got, err := f.reg.Call(context.Background(), "big", nil)
		if err != nil || got != res {
			t.Errorf("a result under the budget was replaced: %v, %v", got, err)
		}
	}
	if f.store.Len() != 0 {
		t.Errorf("the store holds %d values", f.store.Len())
	}
}

func TestTextKept(t *testing.T) {
	f := newFixture(t, &Results{})
	ctx := context.Background()
	text := csvText(5000)
	preview, id := f.keep(t, ctx, tool.Text(text))
	if id == "" {
		t.Fatalf("no handle in the preview:\n%s", preview)
	}
	for _, want := range []string{
		fmt.Sprintf("%d bytes of text in 5001 lines", len(text)),
		"id,name,price\n0,item 0,0.00\n",
		"4999,item 4999,99.52\n",
		"lines left out",
		"read_result", "query_result", "save_result", "as any tool's argument",
	} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview)
		}
	}
	if len(preview) > 4<<10 {
		t.Errorf("the preview has %d bytes", len(preview))
	}
	if f.result.Content[0].Text != text {
		t.Error("the tool's own result was changed")
	}
	got, err := f.call(t, ctx, "read_result", `{"handle":"`+id+`","start_line":2,"end_line":3}`)
	if err != nil || got != "[lines 2 to 3 of 5001]\n0,item 0,0.00\n1,item 1,1.01\n" {
		t.Errorf("read_result lines = %q, %v", got, err)
	}
	got, err = f.call(t, ctx, "read_result", `{"handle":"`+id+`","offset":3,"length":5}`)
	if err != nil || got != "[bytes 3 to 7 of "+fmt.Sprint(len(text))+"]\nname," {
		t.Errorf("read_result bytes = %q, %v", got, err)
	}
	_, wide := f.keep(t, ctx, tool.Text(strings.Repeat("日", DefaultBudget)))
	got, err = f.call(t, ctx, "read_result", `{"handle":"`+wide+`","offset":3}`)
	if want := "[bytes 3 to 16385 of 49152; cut at 16384 bytes, read on at offset 16386]\n"; err != nil || !strings.HasPrefix(got, want) || !utf8.ValidString(got) {
		t.Errorf("read_result bytes cut = %.100q, %v; want %q and valid UTF-8", got, err, want)
	}
	got, err = f.call(t, ctx, "read_result", `{"handle":"`+id+`"}`)
	if err != nil || !strings.Contains(got, "cut at 16384 bytes, read on from line") || len(got) > DefaultBudget+200 {
		t.Errorf("read_result of everything = %d bytes, %v", len(got), err)
	}
	// Passed as an argument, alone, the handle becomes the whole text.
	if _, err := f.call(t, ctx, "echo", `{"text":"`+id+`","count":3}`); err != nil {
		t.Fatal(err)
	}
	var args struct {
		Text  string
		Count int
	}
	if err := json.Unmarshal(f.got, &args); err != nil || args.Text != text || args.Count != 3 {
		t.Errorf("echo got %d bytes of text and count %d, want %d bytes: %v", len(args.Text), args.Count, len(text), err)
	}
}

func TestJSONKept(t *testing.T) {
	f := newFixture(t, &Results{})
	ctx := context.Background()
	items := make([]map[string]any, 400)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("item %d", i), "tags": []string{"a", "b"}}
	}
	doc, _ := json.Marshal(map[string]any{"items": items, "total": 400})
	preview, id := f.keep(t, ctx, &tool.Result{Content: []tool.Content{tool.TextContent(string(doc))}, StructuredContent: json.RawMessage(doc)})
	for _, want := range []string{
		`JSON of shape: {"items": array(400) of {"id": number, "name": string, "tags": array(2)}, "total": number}`,
		`First items of ."items" (400 items):` + "\n" + `{"id":0,"name":"item 0","tags":["a","b"]}`,
	} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview)
		}
	}
	if strings.Count(preview, "kept whole") != 1 {
		t.Errorf("structured content that repeats the text got a handle of its own:\n%s", preview)
	}
	got, err := f.call(t, ctx, "query_result", `{"handle":"`+id+`","jq":"[.items[] | select(.id > 397) | .name]"}`)
	if err != nil || got != `["item 398","item 399"]`+"\n" {
		t.Errorf("query_result = %q, %v", got, err)
	}
	// An object parameter takes the JSON, validated by the tool's schema.
	if _, err := f.call(t, ctx, "echo", `{"doc":"`+id+`"}`); err != nil {
		t.Fatal(err)
	}
	var args struct{ Doc struct{ Total int } }
	if err := json.Unmarshal(f.got, &args); err != nil || args.Doc.Total != 400 {
		t.Errorf("echo got doc %+v, %v", args.Doc, err)
	}
	if _, err := f.call(t, ctx, "echo", `{"list":"`+id+`"}`); err == nil || !strings.Contains(err.Error(), `argument "list"`) {
		t.Errorf("an object handed to an array parameter: %v, want the schema's error", err)
	}
}

func TestStructuredOnly(t *testing.T) {
	f := newFixture(t, &Results{Budget: 1000})
	sc := map[string]any{"rows": make([]any, 300)}
	f.result = &tool.Result{Content: []tool.Content{tool.TextContent("done")}, StructuredContent: sc}
	res, err := f.reg.Call(context.Background(), "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent != nil || len(res.Content) != 2 || !strings.Contains(res.Content[1].Text, `array(300) of null`) {
		t.Errorf("structured content over the budget: %+v", res)
	}
	if f.result.StructuredContent == nil || len(f.result.Content) != 1 {
		t.Error("the tool's own result was changed")
	}
}

func TestBinaryResource(t *testing.T) {
	f := newFixture(t, &Results{})
	ctx := context.Background()
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	blob := tool.EmbeddedResource(tool.ResourceContents{URI: "file:///x.bin", MimeType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString(data)})
	img := tool.ImageContent(base64.StdEncoding.EncodeToString(data), "image/png")
	f.result = &tool.Result{Content: []tool.Content{img, blob}}
	res, err := f.reg.Call(ctx, "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0].Type != tool.TypeImage || res.Content[0].Data != img.Data {
		t.Error("the image did not stay an attachment")
	}
	id := handleRe.FindString(res.Content[1].Text)
	if !strings.Contains(res.Content[1].Text, "binary resource file:///x.bin (application/octet-stream, 65536 bytes)") || id == "" {
		t.Fatalf("the resource's preview: %s", res.Content[1].Text)
	}
	out, err := f.call(t, ctx, "save_result", `{"handle":"`+id+`","path":"x.bin"}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(f.res.Dirs[0], "x.bin")); err != nil || string(b) != string(data) {
		t.Errorf("save_result wrote %d bytes (%v), want the %d bytes of the resource: %s", len(b), err, len(data), out)
	}
}

func TestSaveOutsideDirs(t *testing.T) {
	f := newFixture(t, &Results{})
	_, id := f.keep(t, context.Background(), tool.Text(csvText(3000)))
	elsewhere := filepath.Join(t.TempDir(), "x.csv")
	for _, p := range []string{elsewhere, filepath.Join(f.res.Dirs[0], "..", "escape.csv"), "../escape.csv", ""} {
		_, err := f.call(t, context.Background(), "save_result", `{"handle":"`+id+`","path":"`+p+`"}`)
		if err == nil || !strings.Contains(err.Error(), "outside the directories") && !strings.Contains(err.Error(), "empty") {
			t.Errorf("save_result to %q: %v, want a refusal", p, err)
		}
	}
}

// TestTooLarge is the 1 GiB result, bounded: a store of 1 MiB and a
// result of 4 MiB. The model gets the preview and a sentence saying the
// rest is gone; nothing is stored.
func TestTooLarge(t *testing.T) {
	store := &handle.Memory{MaxBytes: 1 << 20}
	f := newFixture(t, &Results{Store: store})
	preview, id := f.keep(t, context.Background(), tool.Text(csvText(200_000)))
	if id != "" || !strings.Contains(preview, "too large to keep") || !strings.Contains(preview, "memory bound") ||
		!strings.Contains(preview, "First lines:") {
		t.Errorf("preview of a result past the store's bound:\n%s", preview)
	}
	if store.Len() != 0 {
		t.Errorf("the store holds %d values", store.Len())
	}
}

// TestHandleArguments: what is taken as a handle, and what is not.
func TestHandleArguments(t *testing.T) {
	now := time.Now()
	store := &handle.Memory{TTL: time.Minute, Now: func() time.Time { return now }}
	f := newFixture(t, &Results{Store: store})
	alice := tool.WithCaller(context.Background(), tool.Caller{ID: "user:alice"})
	bob := tool.WithCaller(context.Background(), tool.Caller{ID: "user:bob"})
	text := csvText(3000)
	_, id := f.keep(t, alice, tool.Text(text))
	_, released := f.keep(t, alice, tool.Text(text))
	if err := handle.Release[*Value](alice, store, released); err != nil {
		t.Fatal(err)
	}
	_, expired := f.keep(t, alice, tool.Text(text))
	unknown := handle.NewID(Kind)
	cases := []struct {
		name string
		ctx  context.Context
		args string
		want string // the text echo gets, or the error
		err  bool
	}{
		{"owner", alice, `{"text":"` + id + `"}`, text, false},
		{"another caller", bob, `{"text":"` + id + `"}`, "handle " + id + " is unknown to this server", true},
		{"released", alice, `{"text":"` + released + `"}`, "handle " + released + " was released", true},
		{"never made", alice, `{"text":"` + unknown + `"}`, "handle " + unknown + " is unknown to this server", true},
		{"looks like one, too short", alice, `{"text":"res_abc"}`, "res_abc", false},
		{"inside a text", alice, `{"text":"see ` + id + `"}`, "see " + id, false},
		{"a space after", alice, `{"text":"` + id + ` "}`, id + " ", false},
		{"not canonical", alice, `{"text":"` + id[:len(id)-1] + `B"}`, id[:len(id)-1] + "B", false},
		{"another kind", alice, `{"table":"tbl_` + id[4:] + `","text":"res_abc"}`, "res_abc", false},
		{"integer parameter", alice, `{"count":"` + id + `"}`, `argument "count" is the handle ` + id + `, but the parameter takes a integer`, true},
		{"text to an object", alice, `{"doc":"` + id + `"}`, "holds text that is not JSON", true},
		{"untyped parameter", alice, `{"any":"` + id + `"}`, "", false},
		{"nested field", alice, `{"edits":[{"line":1},{"newText":"` + id + `","line":2}]}`, "", false},
		{"nested integer", alice, `{"edits":[{"line":"` + id + `"}]}`, `argument "edits/0/line" is the handle ` + id + `, but the parameter takes a integer`, true},
		{"nested, another caller", bob, `{"edits":[{"newText":"` + id + `"}]}`, `argument "edits/0/newText": handle ` + id + " is unknown to this server", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.call(t, tc.ctx, "echo", tc.args)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "id,name") {
					t.Errorf("the error shows the value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			_ = json.Unmarshal(f.got, &got)
			if tc.want != "" && got["text"] != tc.want {
				t.Errorf("echo got %.60q, want %.60q", got["text"], tc.want)
			}
			if tc.name == "another kind" && got["table"] != "tbl_"+id[4:] {
				t.Errorf("a tbl_ handle was touched: %v", got["table"])
			}
			if edits, _ := got["edits"].([]any); tc.name == "nested field" && (len(edits) != 2 || edits[1].(map[string]any)["newText"] != text) {
				t.Errorf("a nested field did not get the text: %.80v", got["edits"])
			}
			if tc.name == "untyped parameter" && got["any"] != text {
				t.Errorf("an untyped parameter got %.60q", got["any"])
			}
		})
	}
	// A handle unused for its lifetime reads as unknown.
	now = now.Add(2 * time.Minute)
	if _, err := f.call(t, alice, "echo", `{"text":"`+expired+`"}`); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired handle: %v", err)
	}
	// read_result takes the handle itself, and refuses another caller's.
	if _, err := f.call(t, bob, "read_result", `{"handle":"`+id+`"}`); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("read_result of another caller's handle: %v", err)
	}
}

// TestQueryBounds: a jq expression that loops, runs long or makes too
// much stops at a bound, with an error that says which.
func TestQueryBounds(t *testing.T) {
	f := newFixture(t, &Results{QueryTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	doc, _ := json.Marshal(map[string]any{"items": make([]int, 10000)})
	_, id := f.keep(t, ctx, tool.Text(string(doc)))
	for _, tc := range []struct{ jq, want string }{
		{"def f: f; f", "time limit"},
		{"[range(1e9)] | length", "time limit"},
		{"last(range(1e18))", "time limit"},
		{"range(1e18)", "output passed 16384 bytes"},
		{".items", "output passed 16384 bytes"},
		{".items[", "does not parse"},
		{"error(\"boom\")", "boom"},
	} {
		start := time.Now()
		_, err := f.call(t, ctx, "query_result", `{"handle":"`+id+`","jq":`+quote(tc.jq)+`}`)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("jq %s: %v, want an error containing %q", tc.jq, err, tc.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("jq %s took %v", tc.jq, d)
		}
	}
	_, textID := f.keep(t, ctx, tool.Text(csvText(3000)))
	if _, err := f.call(t, ctx, "query_result", `{"handle":"`+textID+`","jq":"."}`); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("jq over text: %v", err)
	}
}

// TestMalformedResults: results that break the rules pass without a
// panic, and what can be kept is.
func TestMalformedResults(t *testing.T) {
	f := newFixture(t, &Results{Budget: 100})
	for _, res := range []*tool.Result{
		{Content: []tool.Content{{Type: tool.TypeResource}, tool.TextContent(strings.Repeat("z", 500))}},
		{Content: []tool.Content{{Type: "hologram", Text: strings.Repeat("z", 500)}}},
		{Content: nil, StructuredContent: make(chan int)},
		{Content: []tool.Content{tool.TextContent(strings.Repeat("z", 500))}, StructuredContent: func() {}},
		{Content: []tool.Content{tool.TextContent("{\"a\": [1, 2," + strings.Repeat(" ", 500))}},
	} {
		f.result = res
		got, err := f.reg.Call(context.Background(), "big", nil)
		if err != nil {
			t.Errorf("%+v: %v", res, err)
			continue
		}
		_ = got.ForModel()
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestBudgetFor: a tool's own budget wins over Budget; negative keeps
// its results whole.
func TestBudgetFor(t *testing.T) {
	budgets := map[string]int64{"big": -1}
	f := newFixture(t, &Results{Budget: 100, BudgetFor: func(c *tool.Call) int64 { return budgets[c.Name] }})
	ctx := context.Background()
	text := strings.Repeat("a line of text\n", 100)
	if preview, id := f.keep(t, ctx, tool.Text(text)); id != "" || preview != text {
		t.Errorf("a tool whose budget is -1 had its result kept: %.80q", preview)
	}
	budgets["big"] = 10000
	if _, id := f.keep(t, ctx, tool.Text(text)); id != "" {
		t.Error("a result under its tool's budget was kept")
	}
	budgets["big"] = 0 // Budget
	if _, id := f.keep(t, ctx, tool.Text(text)); id == "" {
		t.Error("a result over Budget was not kept")
	}
}

// TestOwnToolsNotKept: what read_result returns is never kept again,
// though it may pass the budget (MaxOutput above it).
func TestOwnToolsNotKept(t *testing.T) {
	f := newFixture(t, &Results{Budget: 200, MaxOutput: 1000})
	ctx := context.Background()
	_, id := f.keep(t, ctx, tool.Text(csvText(300)))
	got, err := f.call(t, ctx, "read_result", `{"handle":"`+id+`","start_line":1,"end_line":40}`)
	if err != nil || handleRe.MatchString(got) || !strings.Contains(got, "12,item 12,") || len(got) < 500 {
		t.Errorf("read_result = %q, %v; want the lines themselves", got, err)
	}
}

// TestQueryInputBound: query_result refuses JSON past maxQueryInput
// before decoding it (a query decodes its input whole).
func TestQueryInputBound(t *testing.T) {
	f := newFixture(t, &Results{})
	ctx := context.Background()
	doc := make([]byte, maxQueryInput+1)
	for i := range doc {
		doc[i] = ' '
	}
	copy(doc, `[1]`)
	h, err := handle.Put(ctx, f.store, &Value{Tool: "big", JSON: doc}, int64(len(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.call(t, ctx, "query_result", `{"handle":"`+h.ID+`","jq":"length"}`); err == nil || !strings.Contains(err.Error(), "more than query_result takes") {
		t.Errorf("query over %d bytes: %v", len(doc), err)
	}
}

// TestQueryNoEnvironment: a jq expression cannot read the process's
// environment (API keys): gojq gives env and $ENV nothing unless told.
func TestQueryNoEnvironment(t *testing.T) {
	t.Setenv("SPILL_TEST_SECRET", "hunter2")
	f := newFixture(t, &Results{})
	ctx := context.Background()
	doc, _ := json.Marshal(map[string]any{"items": make([]int, 10000)})
	_, id := f.keep(t, ctx, tool.Text(string(doc)))
	for _, q := range []string{"env.SPILL_TEST_SECRET", "$ENV.SPILL_TEST_SECRET", "env | tostring"} {
		got, err := f.call(t, ctx, "query_result", `{"handle":"`+id+`","jq":`+quote(q)+`}`)
		if err != nil || strings.Contains(got, "hunter2") {
			t.Errorf("jq %s: %q, %v; want no error and no environment", q, got, err)
		}
	}
}

// TestDefaultStoreBounded: without a store of its own, Results keeps at
// most DefaultMaxBytes, so a huge result is refused (TestTooLarge) rather
// than held.
func TestDefaultStoreBounded(t *testing.T) {
	s := (&Results{}).store()
	if m, ok := s.(*handle.Memory); !ok || m.MaxBytes != DefaultMaxBytes {
		t.Errorf("the default store is %#v, want a handle.Memory bounded to %d bytes", s, DefaultMaxBytes)
	}
}
