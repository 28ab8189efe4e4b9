// Package wiretest helps the model adapters' tests: an httptest server
// that answers with wire fixtures (one reply a request, in order) and
// records what it was sent, and comparisons of requests and answers.
package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/model"
)

// Reply is one answer of the server.
type Reply struct {
	// Status is the HTTP status (default 200).
	Status int
	// Header holds the response's headers; Content-Type defaults to
	// application/json.
	Header http.Header
	// Body is sent as it is; File, when set, names a file under testdata
	// whose content is the body.
	Body string
	File string
	// Cut, when set, sends Body (or File) and then breaks the connection
	// instead of ending the response.
	Cut bool
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string // with the query
	Header http.Header
	Body   []byte
}

// Server answers requests with its replies in order, the last one again
// once they run out.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// NewServer starts a server for the test, closed when it ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	for i, r := range replies {
		if r.File != "" {
			b, err := os.ReadFile(filepath.Join("testdata", r.File))
			if err != nil {
				t.Fatal(err)
			}
			replies[i].Body = string(b)
		}
	}
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body.Bytes()})
	reply := s.replies[min(n, len(s.replies)-1)]
	s.mu.Unlock()
	for k, v := range reply.Header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(reply.Body))
	if reply.Cut {
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// EqualJSON fails the test unless got holds the same JSON value as the
// file testdata/want.
func EqualJSON(t testing.TB, got []byte, want string) {
	t.Helper()
	w, err := os.ReadFile(filepath.Join("testdata", want))
	if err != nil {
		t.Fatalf("%v; the request was:\n%s", err, indent(got))
	}
	var gv, wv any
	if err := json.Unmarshal(got, &gv); err != nil {
		t.Fatalf("the request is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(w, &wv); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("the request differs from %s; it was:\n%s", want, indent(got))
	}
}

func indent(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// AnyID, as a wanted ToolCall.ID, accepts an id made up by the adapter
// (adapter.NewCallID: 9 letters and digits).
const AnyID = "*"

var madeUpID = regexp.MustCompile(`^[A-Za-z0-9]{9}$`)

// CheckResponse fails the test unless got is want: the same text,
// reasoning, stop reason, usage and request id, and the same tool calls
// (names, ids, arguments as JSON values, Invalid set or not, signatures).
func CheckResponse(t testing.TB, got, want *model.Response) {
	t.Helper()
	if got == nil {
		t.Fatal("no response")
	}
	if got.Message.Role != model.RoleAssistant {
		t.Errorf("role %q, want assistant", got.Message.Role)
	}
	if got.Message.Text != want.Message.Text {
		t.Errorf("text %q, want %q", got.Message.Text, want.Message.Text)
	}
	if !reflect.DeepEqual(got.Message.Reasoning, want.Message.Reasoning) {
		t.Errorf("reasoning %+v, want %+v", got.Message.Reasoning, want.Message.Reasoning)
	}
	if got.StopReason != want.StopReason {
		t.Errorf("stop reason %q, want %q", got.StopReason, want.StopReason)
	}
	if got.Usage != want.Usage {
		t.Errorf("usage %+v, want %+v", got.Usage, want.Usage)
	}
	if want.RequestID != "" && got.RequestID != want.RequestID {
		t.Errorf("request id %q, want %q", got.RequestID, want.RequestID)
	}
	gc, wc := got.Message.ToolCalls, want.Message.ToolCalls
	if len(gc) != len(wc) {
		t.Fatalf("%d tool calls %+v, want %d", len(gc), gc, len(wc))
	}
	ids := map[string]bool{}
	for i := range gc {
		g, w := gc[i], wc[i]
		switch {
		case w.ID == AnyID && !madeUpID.MatchString(g.ID):
			t.Errorf("call %d: id %q, want a made-up one", i, g.ID)
		case w.ID != AnyID && g.ID != w.ID:
			t.Errorf("call %d: id %q, want %q", i, g.ID, w.ID)
		}
		if ids[g.ID] {
			t.Errorf("call %d: id %q used twice", i, g.ID)
		}
		ids[g.ID] = true
		if g.Name != w.Name {
			t.Errorf("call %d: name %q, want %q", i, g.Name, w.Name)
		}
		if (g.Invalid != "") != (w.Invalid != "") {
			t.Errorf("call %d: invalid %q, want %q", i, g.Invalid, w.Invalid)
		}
		if g.Signature != w.Signature {
			t.Errorf("call %d: signature %q, want %q", i, g.Signature, w.Signature)
		}
		if w.Invalid == "" {
			var ga, wa any
			if err := json.Unmarshal(g.Arguments, &ga); err != nil {
				t.Errorf("call %d: arguments %s: %v", i, g.Arguments, err)
			}
			_ = json.Unmarshal(w.Arguments, &wa)
			if !reflect.DeepEqual(ga, wa) {
				t.Errorf("call %d: arguments %s, want %s", i, g.Arguments, w.Arguments)
			}
		}
	}
}

// Deltas gathers what a stream hands to onDelta.
type Deltas struct {
	Text, Reasoning string
	N               int
}

// On is an onDelta function.
func (d *Deltas) On(x model.Delta) {
	d.N++
	switch x.Kind {
	case model.DeltaText:
		d.Text += x.Text
	case model.DeltaReasoning:
		d.Reasoning += x.Text
	}
}

// Exchange calls m.Generate with req (streaming when stream is set),
// checks the answer against want and the deltas against wantDeltas, and
// returns the one request srv received.
func Exchange(t testing.TB, srv *Server, m model.Model, req *model.Request, stream bool, want *model.Response, wantDeltas Deltas) Request {
	t.Helper()
	var d Deltas
	var onDelta func(model.Delta)
	if stream {
		onDelta = d.On
	}
	res, err := m.Generate(context.Background(), req, onDelta)
	if err != nil {
		t.Fatal(err)
	}
	CheckResponse(t, res, want)
	if d != wantDeltas {
		t.Errorf("deltas %+v, want %+v", d, wantDeltas)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// CheckReuse holds a conversation with m (which sends its requests to
// srv) whose history grows, is cut and is edited in place between turns,
// as a caller may do, and checks that each request's body is byte for
// byte the one a new model (fresh(), sending to srv too) sends for the
// same history: an adapter that keeps what it encoded for the next turn
// must never send what a message was before it changed.
func CheckReuse(t *testing.T, srv *Server, m model.Model, fresh func() model.Model, stream bool) {
	t.Helper()
	h := []model.Message{
		{Role: model.RoleUser, Text: "Weather in Oslo and Lyon?", Images: []model.Image{{MimeType: "image/png", Data: "iVBORw0KGgo="}}},
		{Role: model.RoleAssistant, Text: "Checking.", Reasoning: []model.Reasoning{
			{Source: "thinking", Text: "Two calls.", Signature: "EqQBCgIYAhIM1gbc"},
			{Source: "reasoning_content", Text: "Two calls."},
			{Source: "thought", Text: "Two calls.", Signature: "CiQB0e2K"},
		}, ToolCalls: []model.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)},
		}},
		// Results without names: adapters that need one take the call's.
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "call_1", Text: "-3°C, snow"}, {CallID: "call_2", Text: "12°C, rain"}}},
	}
	steps := []struct {
		name string
		edit func(h []model.Message) []model.Message
	}{
		{"first turn", func(h []model.Message) []model.Message { return h }},
		{"the same history again", func(h []model.Message) []model.Message { return h }},
		{"a turn more", func(h []model.Message) []model.Message {
			return append(h,
				model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_3", Name: "get_time", Arguments: json.RawMessage(`{}`)}}},
				model.Message{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "call_3", Name: "get_time", Text: "noon"}}},
				model.Message{Role: model.RoleUser, Text: "And tomorrow?"})
		}},
		{"a result's text edited in place", func(h []model.Message) []model.Message { h[2].ToolResults[0].Text = "-5°C, snow"; return h }},
		{"arguments edited in place", func(h []model.Message) []model.Message {
			copy(h[1].ToolCalls[1].Arguments[9:], "Rome")
			return h
		}},
		{"a call renamed: its result is named after it", func(h []model.Message) []model.Message { h[1].ToolCalls[0].Name = "get_forecast"; return h }},
		{"a call marked invalid", func(h []model.Message) []model.Message { h[3].ToolCalls[0].Invalid = "cut off"; return h }},
		{"the user's text edited in place", func(h []model.Message) []model.Message { h[0].Text = "Weather in Oslo and Rome?"; return h }},
		{"a turn removed", func(h []model.Message) []model.Message { return slices.Delete(h, 3, 5) }},
		{"the last message dropped", func(h []model.Message) []model.Message { return h[:len(h)-1] }},
	}
	var onDelta func(model.Delta)
	if stream {
		onDelta = func(model.Delta) {}
	}
	for _, st := range steps {
		h = st.edit(h)
		req := &model.Request{System: "Be brief.", Messages: h, MaxTokens: 100}
		n := len(srv.Requests())
		if _, err := m.Generate(context.Background(), req, onDelta); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if _, err := fresh().Generate(context.Background(), req, onDelta); err != nil {
			t.Fatalf("%s, a new model: %v", st.name, err)
		}
		reqs := srv.Requests()
		if len(reqs) != n+2 {
			t.Fatalf("%s: %d requests, want 2", st.name, len(reqs)-n)
		}
		if got, want := reqs[n].Body, reqs[n+1].Body; !bytes.Equal(got, want) {
			t.Errorf("%s: the request is\n%s\nwant (a new model's)\n%s", st.name, got, want)
		}
	}
}
