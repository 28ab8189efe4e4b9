package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/handle"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// note is a value kept behind handles by the tools of TestHandleScopes.
type note struct{ Text string }

func (*note) HandleKind() handle.Kind {
	return handle.Kind{Prefix: "note", Noun: "note", Again: "keep it again"}
}

type keepIn struct {
	Text string `json:"text"`
}

type noteRef struct {
	Note handle.Of[*note] `json:"note"`
}

// noteTools keeps notes behind handles (keep) and reads them back (read).
func noteTools(store handle.Store) []tool.Tool {
	keep := tool.Must(handle.Tool(store, "keep", "Keeps a note.", func(ctx context.Context, in keepIn) (noteRef, error) {
		h, err := handle.Put(ctx, store, &note{Text: in.Text}, int64(len(in.Text)))
		return noteRef{Note: h}, err
	}))
	read := tool.Must(handle.Tool(store, "read", "Reads a note.", func(_ context.Context, in noteRef) (string, error) {
		return in.Note.Value().Text, nil
	}))
	return []tool.Tool{keep, read}
}

// TestHandleScopes checks the scope of a handle for each kind of caller,
// as the README's trust model states it, over the real transports: a
// stdio connection's and a legacy session's handles are theirs alone; a
// 2026-07-28 request with credentials shares its handles with requests
// carrying the same credentials only; without credentials a handle is a
// bearer token, which any anonymous request holding it may use, and no
// caller with credentials or a session.
func TestHandleScopes(t *testing.T) {
	srv := newServer(t, noteTools(&handle.Memory{})...)
	ts := httptest.NewServer(&mcp.HTTPHandler{Server: srv})
	t.Cleanup(ts.Close)
	bearer := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

	type caller func(name, args string) (string, bool)
	over := func(s *mcp.ClientSession) caller {
		return func(name, args string) (string, bool) {
			res, err := s.CallTool(context.Background(), name, json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res.Content[0].Text, res.IsError
		}
	}
	stdio := func() caller {
		c := startStdio(t, srv)
		c.initialize(nil)
		return func(name, args string) (string, bool) {
			return toolText(t, c.call(mcp.MethodToolsCall, map[string]any{"name": name, "arguments": json.RawMessage(args)}))
		}
	}
	callers := map[string]caller{
		"stdio A":     stdio(),
		"stdio B":     stdio(),
		"legacy A":    over(connect(t, &mcp.HTTPTransport{URL: ts.URL}, mcp.Version20251125)),
		"legacy B":    over(connect(t, &mcp.HTTPTransport{URL: ts.URL}, mcp.Version20251125)),
		"token A":     over(connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: bearer("a")}, "")),
		"token A too": over(connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: bearer("a")}, "")),
		"token B":     over(connect(t, &mcp.HTTPTransport{URL: ts.URL, Header: bearer("b")}, "")),
		"anonymous":   over(connect(t, &mcp.HTTPTransport{URL: ts.URL}, "")),
		"anonymous 2": over(connect(t, &mcp.HTTPTransport{URL: ts.URL}, "")),
	}
	// Who, besides its creator, may use a handle each caller creates.
	shares := map[string][]string{
		"stdio A":   nil,
		"legacy A":  nil,
		"token A":   {"token A too"},
		"anonymous": {"anonymous 2"},
	}
	for creator, others := range shares {
		text, isErr := callers[creator]("keep", `{"text":"from `+creator+`"}`)
		var ref struct{ Note string }
		if err := json.Unmarshal([]byte(text), &ref); isErr || err != nil || !strings.HasPrefix(ref.Note, "note_") {
			t.Fatalf("%s: keep answered %q (error %v)", creator, text, isErr)
		}
		args := `{"note":"` + ref.Note + `"}`
		for name, call := range callers {
			want := name == creator
			for _, o := range others {
				want = want || name == o
			}
			text, isErr := call("read", args)
			switch {
			case want && (isErr || text != "from "+creator):
				t.Errorf("%s reading %s's note: %q (error %v), want the note", name, creator, text, isErr)
			case !want && (!isErr || text != "handle "+ref.Note+" is unknown to this server: it may belong to another session or user, the server may have restarted since it was made, or it expired; if you still need the note, keep it again"):
				t.Errorf("%s reading %s's note: %q (error %v), want it to read as unknown", name, creator, text, isErr)
			}
		}
	}
}
