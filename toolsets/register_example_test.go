package toolsets_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/toolsets"
)

// Config is what the notes toolset is opened with.
type Config struct {
	// Dir is where the notes are kept (default: a temporary directory,
	// removed by Close).
	Dir string
}

// notes is a toolset that holds a directory while it is open.
type notes struct {
	dir string
	own bool // the toolset made the directory: Close removes it
}

func (n *notes) Tools() []tool.Tool {
	type noteArgs struct {
		Text string `json:"text" description:"The note"`
	}
	return []tool.Tool{tool.Must(tool.New("note", "Keeps a note.", func(ctx context.Context, in noteArgs) (*tool.Result, error) {
		f, err := os.CreateTemp(n.dir, "note-*.txt")
		if err != nil {
			return nil, err
		}
		defer f.Close()
		_, err = f.WriteString(in.Text)
		return &tool.Result{Content: []tool.Content{tool.TextContent("kept")}}, err
	}))}
}

func (n *notes) Close() error {
	if n.own {
		return os.RemoveAll(n.dir)
	}
	return nil
}

// A toolset's package registers it in its init function, with the type
// of its options.
func init() {
	toolsets.Register("notes", func(ctx context.Context, c Config) (toolsets.Toolset, error) {
		if c.Dir != "" {
			return &notes{dir: c.Dir}, nil
		}
		dir, err := os.MkdirTemp("", "notes-")
		if err != nil {
			return nil, fmt.Errorf("a directory for the notes: %w", err)
		}
		return &notes{dir: dir, own: true}, nil
	})
}

// ExampleRegister registers a toolset of one's own and opens it as the
// built-in ones are.
func ExampleRegister() {
	ctx := context.Background()
	ts, err := toolsets.Open(ctx, "notes", Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer ts.Close()
	var reg tool.Registry
	if err := reg.Add(ts.Tools()...); err != nil {
		log.Fatal(err)
	}
	res, err := reg.Call(ctx, "note", []byte(`{"text": "buy milk"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	fmt.Println(toolsets.Names())
	// Output:
	// kept
	// [calc notes]
}
