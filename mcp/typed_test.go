package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/tool"
)

type windArgs struct {
	Speed float64 `json:"speed" description:"Wind speed" jsonschema:"minimum=0"`
	Unit  string  `json:"unit" jsonschema:"enum=kmh|mph|knots,default=kmh"`
	Gusts *struct {
		Max float64 `json:"max"`
	} `json:"gusts,omitempty"`
}

type windOut struct {
	Beaufort int    `json:"beaufort"`
	Label    string `json:"label"`
}

func windTool() tool.Tool {
	return tool.Must(tool.New("beaufort", "Converts a wind speed to the Beaufort scale",
		func(_ context.Context, in windArgs) (windOut, error) {
			kmh := in.Speed
			switch in.Unit {
			case "mph":
				kmh *= 1.609
			case "knots":
				kmh *= 1.852
			}
			limits := []float64{1, 6, 12, 20, 29, 39, 50, 62, 75, 89, 103, 118}
			labels := []string{"calm", "light air", "light breeze", "gentle breeze", "moderate breeze", "fresh breeze",
				"strong breeze", "near gale", "gale", "strong gale", "storm", "violent storm", "hurricane"}
			b := 0
			for b < len(limits) && kmh >= limits[b] {
				b++
			}
			if in.Gusts != nil && in.Gusts.Max < in.Speed {
				return windOut{}, fmt.Errorf("gusts (%g) cannot be below the mean speed (%g)", in.Gusts.Max, in.Speed)
			}
			return windOut{Beaufort: b, Label: labels[b]}, nil
		}))
}

// callOverMCP calls a tool through the server over an in-memory stdio
// connection, as a 2026-07-28 client.
type stdioPeer struct {
	w   io.Writer
	r   *bufio.Scanner
	seq int
}

func (p *stdioPeer) call(t *testing.T, name, args string) mcp.CallToolResult {
	t.Helper()
	p.seq++
	fmt.Fprintf(p.w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n", p.seq, name, args)
	if !p.r.Scan() {
		t.Fatalf("no response: %v", p.r.Err())
	}
	var resp struct {
		Result mcp.CallToolResult `json:"result"`
		Error  json.RawMessage    `json:"error"`
	}
	if err := json.Unmarshal(p.r.Bytes(), &resp); err != nil || resp.Error != nil {
		t.Fatalf("response %s: %v", p.r.Bytes(), err)
	}
	return resp.Result
}

func TestTypedToolSameInProcessAndOverMCP(t *testing.T) {
	var reg tool.Registry
	reg.IgnoreUnknownArguments(true) // as a server's registry: "dir" is dropped
	if err := reg.Add(windTool()); err != nil {
		t.Fatal(err)
	}
	srv := &mcp.Server{Info: mcp.Implementation{Name: "t", Version: "1"}}
	if err := srv.AddTools(windTool()); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(ctx, inR, outW) }()
	defer func() {
		inW.Close()
		cancel()
		<-done
	}()
	peer := &stdioPeer{w: inW, r: bufio.NewScanner(outR)}

	cases := []struct{ name, args, wantText string }{
		{"ok with default unit", `{"speed": 30}`, `{"beaufort":5,"label":"fresh breeze"}`},
		{"ok in knots", `{"speed": 50, "unit": "knots"}`, `{"beaufort":10,"label":"storm"}`},
		{"wrong type", `{"speed": "fast"}`, `invalid arguments for tool beaufort: argument "speed": expected number, got string "fast"`},
		{"missing", `{}`, `invalid arguments for tool beaufort: missing required argument "speed"`},
		{"bad enum and unknown key", `{"speed": 3, "unit": "m/s", "dir": "N"}`, ``},
		{"below minimum", `{"speed": -1}`, ``},
		{"not JSON", `"{speed"`, ``},
		{"tool's own error", `{"speed": 40, "gusts": {"max": 10}}`, `gusts (10) cannot be below the mean speed (40)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local, err := reg.Call(context.Background(), "beaufort", json.RawMessage(tc.args))
			if err != nil {
				local = tool.ErrorResult(err)
			}
			remote := peer.call(t, "beaufort", tc.args)
			if local.IsError != remote.IsError || len(remote.Content) != 1 || local.Content[0].Text != remote.Content[0].Text {
				t.Fatalf("in-process %+v\n     over MCP %+v", local, remote)
			}
			if tc.wantText != "" && local.Content[0].Text != tc.wantText {
				t.Errorf("text = %q, want %q", local.Content[0].Text, tc.wantText)
			}
			if tc.wantText == "" && !local.IsError {
				t.Errorf("want an error result, got %q", local.Content[0].Text)
			}
			t.Logf("%s → %s", tc.args, local.Content[0].Text)
		})
	}
}
