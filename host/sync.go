package host

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// Sync keeps the tools of reg in step with the configured servers, each a
// source of reg named after the server (see tool.Registry.SetSource). It
// connects to every server at once and returns when each has been tried:
// the error joins a *ServerError for each server that failed (those are
// retried in the background, with backoff).
//
// From then on, until ctx ends, a server's tools are listed again when it
// says its list changed (notifications/tools/list_changed) and when the
// freshness it gave (ttlMs) runs out. A server that goes away (a stdio
// server that exits, a call that finds its transport gone) has its tools
// removed, with the reason, and is restarted; its tools come back once it
// answers again. A listing of reg is never a mix of old and new tools.
func (h *Host) Sync(ctx context.Context, reg *tool.Registry) error {
	errs := h.fanOut(h.ServerNames(), func(_ int, srv *server) error {
		first := make(chan error, 1)
		go srv.sync(ctx, reg, func(err error) { first <- err })
		return <-first
	})
	return errors.Join(errs...)
}

// relistInterval is the least time between two listings that a server's
// list_changed notifications cause: a server that sends them in a loop
// costs a listing, and the registry's watchers (an MCP server's clients) a
// change, this often at most.
const relistInterval = 250 * time.Millisecond

// minTTL is the least time between two listings that a server's ttlMs
// causes: a 2026-07-28 server that says its list may change at any time
// (ttlMs 0) is listed this often, not in a busy loop.
const minTTL = time.Second

// sync keeps the server's tools in reg until ctx ends; tried is called
// once, with the outcome of the first attempt.
func (s *server) sync(ctx context.Context, reg *tool.Registry, tried func(error)) {
	report := func(err error) {
		if tried != nil {
			tried(err)
			tried = nil
		}
	}
	defer func() { report(ctx.Err()) }()
	defer reg.RemoveSource(s.cfg.Name, fmt.Errorf("server %q is no longer connected", s.cfg.Name))
	retry := 0 // consecutive failed listings on a live session
	// last is what was published, while reg has it: a listing that
	// changes nothing changes nothing in reg, and tells nobody.
	var last []tool.Info
	for ctx.Err() == nil {
		sess, err := s.connected(ctx)
		if err != nil {
			reg.RemoveSource(s.cfg.Name, err)
			last = nil
			report(err)
			continue // connected waits out the backoff
		}
		last, err = s.publish(ctx, reg, last)
		listed := time.Now()
		report(err)
		var wait <-chan time.Time
		if err != nil {
			retry++
			wait = time.After(max(backoff(retry+1), time.Second))
		} else if retry = 0; !sess.ToolsExpiry().IsZero() {
			wait = time.After(max(time.Until(sess.ToolsExpiry()), time.Until(listed.Add(minTTL))))
		}
		// Wait for a reason to list again.
		select {
		case <-ctx.Done():
		case <-s.changed:
			// Notifications in a burst, or a loop, cost one listing
			// per relistInterval: those that come meanwhile wait in
			// s.changed as one.
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(listed.Add(relistInterval))):
			}
		case <-wait:
		case <-sess.Done():
			err := sess.Err()
			if err == nil {
				err = fmt.Errorf("server %q closed its connection", s.cfg.Name)
			}
			reg.RemoveSource(s.cfg.Name, err)
			last = nil
			s.broken(sess, err)
		}
	}
}

// publish lists the server's tools and makes them its tools in reg,
// unless they are those published last (nil: none); it returns what it
// published. A failure removes them, saying why.
func (s *server) publish(ctx context.Context, reg *tool.Registry, last []tool.Info) ([]tool.Info, error) {
	defs, err := s.listTools(ctx)
	if err == nil && last != nil && reflect.DeepEqual(defs, last) {
		return last, nil
	}
	if err == nil {
		rts := s.remoteTools(defs)
		tools := make([]tool.Tool, len(rts))
		for i, rt := range rts {
			tools[i] = rt
		}
		err = reg.SetSource(s.cfg.Name, tools)
		if err != nil {
			err = fmt.Errorf("server %q: %w: set a \"prefix\" for it in %s", s.cfg.Name, err, s.host.Config.Path)
		}
	}
	if err != nil {
		reg.RemoveSource(s.cfg.Name, err)
		return nil, err
	}
	return defs, nil
}
