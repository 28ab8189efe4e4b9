// Command relay is the floor for BenchmarkGatewayPaired: a relay that
// knows nothing of MCP in front of one upstream, so that what any gateway
// in a process of its own costs (the extra process, its system calls and
// the wake-ups between them) is measured apart from what toolwire's
// gateway does with each message. Over stdio it copies bytes both ways
// between its own stdin/stdout and the upstream program's (io.Copy); over
// HTTP it is net/http/httputil's ReverseProxy to the upstream URL,
// flushing each write. Its flags are the gateway's (servers/gateway), so
// the benchmark starts either the same way. See bench/README.md, "The
// gateway".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"

	"github.com/toolwire/toolwire/bench/internal/serve"
)

func main() {
	upCmd := flag.String("upstream-cmd", "", "the upstream: a server program to run over stdio")
	upURL := flag.String("upstream-url", "", "the upstream: a Streamable HTTP endpoint")
	flag.String("upstream-version", "", "ignored: a relay passes on whatever revision the client speaks")
	serve.Main(
		func(ctx context.Context) error {
			if *upCmd == "" {
				return errors.New("relay over stdio needs -upstream-cmd")
			}
			return copyStdio(ctx, *upCmd)
		},
		func() http.Handler {
			u, err := url.Parse(*upURL)
			if err != nil || u.Host == "" {
				log.Fatalf("relay over HTTP needs -upstream-url: %q", *upURL)
			}
			p := &httputil.ReverseProxy{
				Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path },
				FlushInterval: -1,
			}
			return p
		},
	)
}

// copyStdio runs the upstream program and copies bytes between it and this
// process's stdin and stdout until either side closes.
func copyStdio(ctx context.Context, prog string) error {
	cmd := exec.CommandContext(ctx, prog)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the upstream: %w", err)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close()
	}()
	_, err = io.Copy(os.Stdout, out)
	return errors.Join(err, cmd.Wait())
}
