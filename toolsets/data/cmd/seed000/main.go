// Command seed000 runs the CSV flow for real over MCP: it launches the
// data server (toolwire serve data) on stdio in the CSV file's directory,
// calls load_csv, drop_missing and describe, and prints what each tool
// returned to the model next to the size of the data it handled.
//
//	go run ./cmd/seed000 -server toolwire -csv ../../testdata/data/sales.csv
//
// With -generate N it first writes a generated sales table of N rows (about
// 1% of its cells missing) to the -csv file.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/toolsets/data/demo"
)

func main() {
	server := flag.String("server", "toolwire", "the toolwire binary to launch as the data server")
	csvPath := flag.String("csv", "sales.csv", "the CSV file to load")
	rows := flag.Int("generate", 0, "first write a generated sales table of this many rows to the -csv file")
	flag.Parse()
	if *rows > 0 {
		if err := generate(*csvPath, *rows); err != nil {
			fmt.Fprintln(os.Stderr, "seed000:", err)
			os.Exit(1)
		}
	}
	if err := run(*server, *csvPath); err != nil {
		fmt.Fprintln(os.Stderr, "seed000:", err)
		os.Exit(1)
	}
}

func generate(path string, rows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := demo.GenerateCSV(f, rows, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func run(server, csvPath string) error {
	abs, err := filepath.Abs(csvPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := &mcp.Client{Info: mcp.Implementation{Name: "seed000", Version: "1"}}
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: server, Args: []string{"serve", "data"}, Dir: filepath.Dir(abs), Stderr: os.Stderr})
	if err != nil {
		return fmt.Errorf("launching %s serve data: %w", server, err)
	}
	defer cs.Close()
	fmt.Printf("Data server: %s serve data (MCP over stdio, protocol %s), in %s\n\n", server, cs.ProtocolVersion(), filepath.Dir(abs))
	r, err := demo.Run(ctx, cs, filepath.Base(abs), abs)
	if err != nil {
		return err
	}
	r.Print(os.Stdout)
	return nil
}
