package tool

import (
	"errors"
	"fmt"
	"strings"
)

// Errors from a call come in two classes, told apart by errors.Is(err,
// ErrFatal):
//
//   - Errors a model can act on: arguments that fail the pipeline
//     (*ArgumentsError), an unknown tool (*UnknownToolError), a panicking
//     tool (*PanicError), and a tool's own errors. Show them to the model
//     (ErrorResult) and let it repair its call.
//   - Fatal errors, which end a run instead: the caller's context is done,
//     the host has no value for an injected parameter (*InjectionError), a
//     tool's server is gone. The model cannot repair them.
//
// The MCP server and the agent loop apply this one rule.
var ErrFatal = errors.New("fatal to the run")

// Fatal marks err as fatal to the run: errors.Is(Fatal(err), ErrFatal) is
// true, and errors.Is and errors.As still see err. Its message is err's.
// Fatal(nil) is nil.
func Fatal(err error) error {
	if err == nil || errors.Is(err, ErrFatal) {
		return err
	}
	return fatalError{err}
}

type fatalError struct{ err error }

func (e fatalError) Error() string        { return e.err.Error() }
func (e fatalError) Unwrap() error        { return e.err }
func (e fatalError) Is(target error) bool { return target == ErrFatal }

// UnknownToolError reports a call to a tool the registry does not have. A
// model can act on it: Suggestions are the close names it may have meant,
// and Known, when none is close, names the tools there are (up to ten).
type UnknownToolError struct {
	Name        string
	Suggestions []string
	Known       []string
	// Gone says why the tool is no longer there, when its source (an MCP
	// server) went away.
	Gone error
}

func (e *UnknownToolError) Error() string {
	switch {
	case e.Gone != nil:
		return fmt.Sprintf("tool %q is not available now: %v", e.Name, e.Gone)
	case len(e.Suggestions) > 0:
		return fmt.Sprintf("unknown tool %q: did you mean %s?", e.Name, strings.Join(e.Suggestions, " or "))
	case len(e.Known) == 0:
		return fmt.Sprintf("unknown tool %q: there are no tools", e.Name)
	}
	return fmt.Sprintf("unknown tool %q (tools: %s)", e.Name, strings.Join(e.Known, ", "))
}

// PanicError reports a tool that panicked. The registry recovers the
// panic, so a model sees which tool failed and the process stays up.
type PanicError struct {
	Tool  string
	Value any
	// Stack is the panicking goroutine's stack, for logs; never show it
	// to a model.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("tool %s failed: it panicked: %v", e.Tool, e.Value)
}

// InjectionError reports injected parameters the host has no value for: a
// mistake in the host's set-up, fatal to the run.
type InjectionError struct {
	Tool  string
	Unset []string
}

func (e *InjectionError) Error() string {
	return fmt.Sprintf("tool %s: the host has no value for injected parameter%s %s: configure them (inject) or pass them with tool.WithInjected",
		e.Tool, plural(len(e.Unset)), strings.Join(e.Unset, ", "))
}

// Is makes an InjectionError fatal.
func (e *InjectionError) Is(target error) bool { return target == ErrFatal }
