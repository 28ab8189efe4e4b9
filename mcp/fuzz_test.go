package mcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

// fuzzRequestTimeout bounds each fuzzed POST: a request that legitimately
// stays open (subscriptions/listen, a legacy elicitation waiting for its
// answer) ends with it, as the client's and the server's timeout.
const fuzzRequestTimeout = 100 * time.Millisecond

// Header variants of FuzzHTTPHandler, chosen by the variant byte.
const (
	variantModern       = iota // MCP headers mirrored from the body
	variantNoHeaders           // no MCP headers (legacy initialize, or nothing)
	variantSession             // inside a legacy session opened beforehand
	variantWrongTypes          // wrong Content-Type and Accept
	variantBase64Name          // Mcp-Name in the =?base64?...?= form
	variantStaleSession        // an Mcp-Session-Id the server never issued
	numVariants
)

// statuses are the HTTP statuses HTTPHandler may answer a POST with.
var statuses = map[int]bool{
	http.StatusOK: true, http.StatusAccepted: true, http.StatusNoContent: true,
	http.StatusBadRequest: true, http.StatusForbidden: true, http.StatusNotFound: true,
	http.StatusMethodNotAllowed: true, http.StatusNotAcceptable: true, http.StatusConflict: true,
	http.StatusRequestEntityTooLarge: true, http.StatusUnsupportedMediaType: true,
}

func fuzzServer(f *testing.F) *mcp.Server {
	srv := &mcp.Server{Info: mcp.Implementation{Name: "fuzz", Version: "1"}, MaxMessageSize: 64 << 10, PageSize: 2, RequestTimeout: fuzzRequestTimeout}
	headerTool := tool.NewFunc(
		tool.Info{Name: "region", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.Text("ok"), nil })

	if err := srv.AddTools(echoTool(), addTool(), divideTool(), panicTool(), progressTool(), loggingTool(), greetTool(), headerTool); err != nil {
		f.Fatal(err)
	}
	srv.AddResource(mcp.Resource{URI: "file:///a", Name: "a"}, func(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: uri, Text: "a"}}, nil
	})
	if err := srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "file:///t/{name}", Name: "t"}, func(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: uri, Text: "t"}}, nil
	}); err != nil {
		f.Fatal(err)
	}
	srv.AddPrompt(mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "x", Required: true}}},
		func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: tool.TextContent(args["x"])}}}, nil
		})
	return srv
}

// mirrored reads what the MCP headers mirror from a body, as well as it can.
func mirrored(body []byte) (method, name, version string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
			Meta struct {
				V string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	name = m.Params.Name
	if name == "" {
		name = m.Params.URI
	}
	version = m.Params.Meta.V
	if version == "" {
		version = mcp.LatestVersion
	}
	return m.Method, name, version
}

// fuzzPost sends one POST to h and returns the recorded response.
func fuzzPost(h http.Handler, body []byte, header http.Header) *httptest.ResponseRecorder {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.Host = "127.0.0.1"
	req.Header = header
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func baseHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	return h
}

// FuzzHTTPHandler posts arbitrary bodies, with a few header variants, to a
// Streamable HTTP handler serving every kind of tool, resource and prompt.
// The handler must not panic, must answer with a status it documents, and
// every JSON it writes (a body or SSE events) must be a valid JSON-RPC
// message.
func FuzzHTTPHandler(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), uint8(variantModern))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`), uint8(variantNoHeaders))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`), uint8(variantSession))
	f.Add([]byte(`{`), uint8(variantWrongTypes))
	srv := fuzzServer(f)
	initBody := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"f","version":"1"}}}`)

	f.Fuzz(func(t *testing.T, body []byte, variant uint8) {
		h := &mcp.HTTPHandler{Server: srv}
		defer h.Close()
		header := baseHeader()
		method, name, version := mirrored(body)
		switch variant % numVariants {
		case variantModern:
			header.Set(mcp.HeaderProtocolVersion, version)
			header.Set(mcp.HeaderMethod, method)
			if name != "" {
				header.Set(mcp.HeaderName, name)
			}
		case variantNoHeaders:
		case variantSession:
			rec := fuzzPost(h, initBody, baseHeader())
			sid := rec.Header().Get(mcp.HeaderSessionID)
			if rec.Code != http.StatusOK || sid == "" {
				t.Fatalf("initialize: HTTP %d, session %q: %s", rec.Code, sid, rec.Body)
			}
			header.Set(mcp.HeaderSessionID, sid)
			header.Set(mcp.HeaderProtocolVersion, mcp.Version20251125)
		case variantWrongTypes:
			header.Set("Content-Type", "text/plain")
			header.Set("Accept", "application/json")
		case variantBase64Name:
			header.Set(mcp.HeaderProtocolVersion, version)
			header.Set(mcp.HeaderMethod, method)
			header.Set(mcp.HeaderName, "=?base64?"+base64.StdEncoding.EncodeToString([]byte(name))+"?=")
		case variantStaleSession:
			header.Set(mcp.HeaderSessionID, "0123456789abcdef")
			header.Set(mcp.HeaderProtocolVersion, version)
			header.Set(mcp.HeaderMethod, method)
		}

		rec := fuzzPost(h, body, header)
		checkHTTPAnswer(t, body, rec)
	})
}

// checkHTTPAnswer checks the invariants of any answer to a POST.
func checkHTTPAnswer(t *testing.T, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if !statuses[rec.Code] {
		t.Fatalf("POST %q: HTTP status %d", body, rec.Code)
	}
	out := rec.Body.Bytes()
	ct := rec.Header().Get("Content-Type")
	switch {
	case rec.Code == http.StatusAccepted || rec.Code == http.StatusNoContent:
		if len(out) != 0 {
			t.Fatalf("POST %q: HTTP %d with a body %q", body, rec.Code, out)
		}
	case ct == "application/json":
		checkJSONRPC(t, body, out)
	case ct == "text/event-stream":
		if rec.Code != http.StatusOK {
			t.Fatalf("POST %q: event stream with HTTP %d", body, rec.Code)
		}
		for _, ev := range strings.Split(string(out), "\n\n") {
			for _, line := range strings.Split(ev, "\n") {
				// An empty data line is a legacy stream's priming event.
				if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" {
					checkJSONRPC(t, body, []byte(data))
				}
			}
		}
	default:
		t.Fatalf("POST %q: HTTP %d with Content-Type %q, body %q", body, rec.Code, ct, out)
	}
}

func checkJSONRPC(t *testing.T, body, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("POST %q: invalid JSON in the answer: %q", body, out)
	}
	if _, err := jsonrpc.Decode(out); err != nil {
		t.Fatalf("POST %q: the answer %s is not a JSON-RPC message: %v", body, out, err)
	}
}
