package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/oauth"
)

// hostOptions are the flags of the commands that use the configured
// servers.
type hostOptions struct {
	g       *globalOptions
	config  string
	timeout time.Duration
	// adhoc is a server given on the command line (withAdhoc).
	adhoc adhocServer
}

func (o *hostOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.config, "config", "", "configuration file (default $TOOLWIRE_CONFIG, a project's .mcp.json or .vscode/mcp.json, ~/.config/toolwire/mcp.json, else another app's: see toolwire help config)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute,
		fmt.Sprintf("give up on the whole command after this long (each server also has %v to start, or its \"timeout\")", host.DefaultConnectTimeout))
	_ = cmd.RegisterFlagCompletionFunc("config", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
	})
}

// session is an open host for one command.
type session struct {
	*host.Host
	ctx      context.Context
	progress *progress
	cancel   context.CancelFunc
	cache    *nameCache
	tokens   *oauth.UserStore
	// note receives the note of where tokens went, when a command (not a
	// login) made the token file: nil when -q.
	note io.Writer
	// stderr is where the servers' stderr and their state go with -v:
	// the command's stderr, until chat moves it onto its line editor.
	stderr *switchWriter
}

// switchWriter is a writer whose destination can change while others
// write to it (a stdio server's stderr is copied from a goroutine of its
// own).
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// set makes w the destination and returns the one before.
func (s *switchWriter) set(w io.Writer) io.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.w
	s.w = w
	return old
}

// close stops the progress display, the servers, and the context; it
// says where the tokens went if this command was the first to keep
// some in the token file (a server's client credentials, say).
func (s *session) close() {
	s.progress.close()
	if s.note != nil && s.tokens.Created() {
		if where, err := s.tokens.Where(s.ctx); err == nil {
			fmt.Fprintf(s.note, "toolwire: login tokens are kept %s\n", where)
		}
	}
	s.cancel()
	s.Host.Close()
}

// open loads the configuration into a host, with a context bounded by
// --timeout and a progress display on a terminal's stderr.
func (o *hostOptions) open(cmd *cobra.Command) (*session, error) {
	stderr := cmd.ErrOrStderr()
	cfg, err := o.loadConfig(stderr)
	if err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("config %s has no servers under \"mcpServers\" (see toolwire help config)", cfg.Path)
	}
	store, err := tokenStore()
	if err != nil {
		return nil, err
	}
	h := &host.Host{Config: cfg}
	h.Client.Info.Name, h.Client.Info.Version = "toolwire", versionInfo().Version
	h.Tokens, h.LoginCommand = store, o.loginCommand()
	s := &session{Host: h, cache: newNameCache(cfg.Path), tokens: store, stderr: &switchWriter{w: stderr}}
	if o.adhoc.set() {
		s.cache = &nameCache{} // no file: completion is for configured servers
	}
	if !o.g.quiet {
		s.note = stderr
	}
	switch {
	case o.g.verbose:
		h.Stderr = s.stderr
		h.Observe = eventLogger(s.stderr)
	case !o.g.quiet && isTerminal(stderr):
		s.progress = newProgress(stderr)
		h.Observe = s.progress.observe
	}
	s.ctx, s.cancel = context.WithTimeout(cmd.Context(), o.timeout)
	return s, nil
}

// loadConfig reads the ad-hoc server, or the configuration file
// findConfig finds (configOrder).
func (o *hostOptions) loadConfig(stderr io.Writer) (*host.Config, error) {
	if o.adhoc.set() {
		return o.adhoc.config(stderr, o.g)
	}
	f, err := o.findConfig(false)
	if err != nil {
		return nil, err
	}
	f.report(stderr, o.g)
	path := f.Path
	cfg, err := host.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if !o.g.quiet {
		for _, w := range cfg.Warnings {
			fmt.Fprintln(stderr, "toolwire: warning:", w)
		}
	}
	return cfg, nil
}

// eventLogger writes each server's state changes as lines (for -v).
func eventLogger(w io.Writer) func(host.Event) {
	return func(e host.Event) {
		switch e.State {
		case host.Connecting:
			fmt.Fprintf(w, "toolwire: %s: connecting\n", e.Server)
		case host.Ready:
			fmt.Fprintf(w, "toolwire: %s: ready after %v\n", e.Server, e.Elapsed.Round(time.Millisecond))
		case host.Failed:
			fmt.Fprintf(w, "toolwire: %s: failed after %v\n", e.Server, e.Elapsed.Round(time.Millisecond))
		}
	}
}

// partial reports servers that failed while others answered, and makes
// the command fail.
func partial(stderr io.Writer, err error) error {
	if err == nil {
		return nil
	}
	fmt.Fprintln(stderr, "toolwire: some servers failed:")
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "  "+line)
	}
	for _, h := range hints(err, false) {
		fmt.Fprintln(stderr, "toolwire: try:", h)
	}
	return &exitError{code: 1, msg: "some servers failed (see above)"}
}

// hints says what to try about the servers that failed to connect.
func hints(err error, verbose bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if errors.Is(err, oauth.ErrKeyring) {
		add(fmt.Sprintf("%s=file keeps the login tokens in ~/.config/toolwire/tokens.json instead, readable only by you (toolwire login again then)", tokenStoreEnv))
	}
	for _, ce := range connectErrors(err) {
		if ce.Stdio && !verbose {
			add("run the command again with -v to see the servers' stderr")
		}
		if ce.TimedOut {
			add(fmt.Sprintf("if %s is only slow to start (npx fetching it, say), give it a longer \"timeout\" in %s, e.g. \"timeout\": \"2m\"", ce.Server, ce.Config))
		}
	}
	return out
}

// connectErrors finds every *host.ConnectError in an error tree.
func connectErrors(err error) []*host.ConnectError {
	var out []*host.ConnectError
	var walk func(error)
	walk = func(err error) {
		if ce, ok := err.(*host.ConnectError); ok {
			out = append(out, ce)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// exitError carries a process exit code; its details are printed already.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
