package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
)

// DefaultConnectTimeout bounds starting a server and its handshake when the
// server's configuration sets no "timeout".
const DefaultConnectTimeout = 30 * time.Second

// State is where a server stands.
type State int

// The states an Event reports.
const (
	// Connecting: the server is being started or reached, and greeted.
	Connecting State = iota
	// Ready: the handshake is done.
	Ready
	// Failed: the server could not be connected; Event.Err says why.
	Failed
)

// String names the state: "connecting", "ready" or "failed".
func (s State) String() string {
	switch s {
	case Connecting:
		return "connecting"
	case Ready:
		return "ready"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Event reports a change in a server's state to Host.Observe.
type Event struct {
	Server string
	State  State
	// Elapsed is the time since connecting began.
	Elapsed time.Duration
	// Err is why the server failed.
	Err error
}

// Steps of connecting that a ConnectError names, besides the handshake's
// own (mcp.MethodDiscover, mcp.MethodInitialize).
const (
	StepStart   = "start"   // launching a stdio server's command
	StepConnect = "connect" // reaching an HTTP server
)

// ConnectError is a server that could not be connected: which one, at
// which step, and how long the host waited.
type ConnectError struct {
	Server string
	// Step is StepStart, StepConnect, mcp.MethodDiscover or
	// mcp.MethodInitialize.
	Step   string
	Waited time.Duration
	// Timeout is the connect timeout that was in force, and TimeoutSet
	// whether it came from the server's "timeout" key.
	Timeout    time.Duration
	TimeoutSet bool
	// TimedOut says the server did not answer within Timeout.
	TimedOut bool
	// Stdio says the server is a command (with a stderr to look at).
	Stdio bool
	// Config is the configuration file the server is in.
	Config string
	Err    error
}

// Error names the server and the step; for a timeout, how long the host
// waited and where that timeout comes from.
func (e *ConnectError) Error() string {
	var lr *LoginRequiredError
	if errors.As(e.Err, &lr) {
		return lr.Error()
	}
	if e.TimedOut {
		return fmt.Sprintf("server %q: no answer to %s within %s", e.Server, e.Step, e.timeoutOrigin())
	}
	msg := e.Err.Error()
	var hs *mcp.HandshakeError
	if !errors.As(e.Err, &hs) {
		msg = e.Step + ": " + msg
	}
	if e.Waited >= time.Second {
		msg += fmt.Sprintf(" (after %v)", e.Waited.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("server %q: %s", e.Server, msg)
}

func (e *ConnectError) timeoutOrigin() string {
	if e.TimeoutSet {
		return fmt.Sprintf("%v (its \"timeout\" in %s)", e.Timeout, e.Config)
	}
	return fmt.Sprintf("%v (the default connect timeout; set \"timeout\" for it in %s to change it)", e.Timeout, e.Config)
}

// Unwrap returns the underlying failure.
func (e *ConnectError) Unwrap() error { return e.Err }

// connectTimeout is the server's "timeout", else DefaultConnectTimeout.
func (s *server) connectTimeout() (time.Duration, bool) {
	if d := time.Duration(s.cfg.Timeout); d > 0 {
		return d, true
	}
	return DefaultConnectTimeout, false
}

func (h *Host) observe(e Event) {
	if h.Observe != nil {
		h.Observe(e)
	}
}

// connect opens a session within the connect timeout, reporting progress
// to Host.Observe. A URL without a "type" is tried as Streamable HTTP and
// then, if that is refused, as HTTP+SSE: the spec's backwards
// compatibility with 2024-11-05 servers.
func (s *server) connect(ctx context.Context, c *mcp.Client) (*mcp.ClientSession, error) {
	timeout, set := s.connectTimeout()
	// The probe for the modern era must leave time for the legacy
	// handshake after it.
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = mcp.DefaultProbeTimeout
	}
	c.ProbeTimeout = min(c.ProbeTimeout, timeout/3)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	name := s.cfg.Name
	s.host.observe(Event{Server: name, State: Connecting})
	var sess *mcp.ClientSession
	var err error
	if s.sse {
		sess, err = c.Connect(cctx, s.sseTransport())
	} else {
		sess, err = c.Connect(cctx, s.transport())
		if err != nil && s.mayFallBack(cctx, err) {
			var sseErr error
			if sess, sseErr = c.Connect(cctx, s.sseTransport()); sseErr == nil {
				s.sse, err = true, nil
			} else {
				err = fmt.Errorf("%w; as HTTP+SSE (2024-11-05) it failed too: %v", err, sseErr)
			}
		}
	}
	waited := time.Since(start)
	if err != nil {
		err = s.loginError(err)
		ce := &ConnectError{
			Server: name, Step: StepStart, Waited: waited, Timeout: timeout, TimeoutSet: set,
			Stdio: s.cfg.Command != "", Config: s.host.Config.Path, Err: err,
		}
		if !ce.Stdio {
			ce.Step = StepConnect
		}
		var hs *mcp.HandshakeError
		if errors.As(err, &hs) {
			ce.Step = hs.Step
		}
		ce.TimedOut = errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		s.host.observe(Event{Server: name, State: Failed, Elapsed: waited, Err: ce})
		return nil, ce
	}
	s.host.observe(Event{Server: name, State: Ready, Elapsed: waited})
	return sess, nil
}

// mayFallBack says whether a failed Streamable HTTP connection is worth
// retrying as HTTP+SSE: the server was reached, answered with HTTP (not
// MCP), and the configuration did not name the transport.
func (s *server) mayFallBack(ctx context.Context, err error) bool {
	if s.cfg.URL == "" || s.cfg.Type != "" || ctx.Err() != nil || errors.Is(err, oauth.ErrLoginRequired) {
		return false
	}
	var rpcErr *jsonrpc.Error
	var opErr *net.OpError
	return !errors.As(err, &rpcErr) && !(errors.As(err, &opErr) && opErr.Op == "dial")
}
