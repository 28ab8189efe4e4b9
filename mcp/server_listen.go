package mcp

import (
	"context"
	"slices"
	"sync"

	"github.com/toolwire/toolwire/jsonrpc"
)

// listener is one open subscriptions/listen stream (2026-07-28).
type listener struct {
	id     jsonrpc.ID
	filter SubscriptionFilter
	out    sender
	once   sync.Once
	done   chan struct{}
	// mu orders the stream: held while the listener is registered and
	// acknowledged, so no notification can come before the
	// acknowledgement, and none made after it is missed.
	mu sync.Mutex
	// silenced is set, under mu, once the client cancels the stream: no
	// message may follow a cancellation.
	silenced bool
}

// silence stops all further messages on the stream at once.
func (l *listener) silence() {
	l.mu.Lock()
	l.silenced = true
	l.mu.Unlock()
}

func (l *listener) stop() { l.once.Do(func() { close(l.done) }) }

func (l *listener) meta() map[string]any {
	return map[string]any{MetaSubscriptionID: l.id.Raw()}
}

func (l *listener) notify(method string, params any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sendLocked(method, params)
}

func (l *listener) sendLocked(method string, params any) {
	if l.silenced {
		return
	}
	m, err := jsonrpc.NewNotification(method, params)
	if err == nil {
		_ = l.out.send(m)
	}
}

func (l *listener) listChanged(method string) {
	f := l.filter
	if (method == NotificationToolsListChanged && f.ToolsListChanged) ||
		(method == NotificationPromptsListChanged && f.PromptsListChanged) ||
		(method == NotificationResourcesListChanged && f.ResourcesListChanged) {
		l.notify(method, map[string]any{"_meta": l.meta()})
	}
}

func (l *listener) resourceUpdated(uri string) {
	if slices.Contains(l.filter.ResourceSubscriptions, uri) {
		l.notify(NotificationResourceUpdated, ResourceUpdatedParams{Meta: l.meta(), URI: uri})
	}
}

// listen serves subscriptions/listen: it acknowledges the notification types
// the server can honour, then holds the request open, delivering them, until
// the client cancels it or the connection ends.
func (s *Server) listen(ctx context.Context, req *request) (any, error) {
	var p ListenParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if !req.modern {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: subscriptions/listen is part of protocol %s; legacy sessions use resources/subscribe and list_changed notifications", LatestVersion)
	}
	caps := s.capabilities()
	agreed := SubscriptionFilter{ToolsListChanged: p.Notifications.ToolsListChanged && caps.Tools != nil}
	if caps.Prompts != nil {
		agreed.PromptsListChanged = p.Notifications.PromptsListChanged
	}
	if caps.Resources != nil {
		agreed.ResourcesListChanged = p.Notifications.ResourcesListChanged
		agreed.ResourceSubscriptions = p.Notifications.ResourceSubscriptions
	}
	var err error
	if agreed.TaskIDs, err = s.agreedTaskIDs(ctx, req, p.Notifications.TaskIDs); err != nil {
		return nil, err
	}
	l := &listener{id: req.id, filter: agreed, out: req.out, done: make(chan struct{})}
	c := req.conn
	l.mu.Lock()
	c.mu.Lock()
	if c.listeners == nil {
		c.listeners = map[*listener]struct{}{}
	}
	c.listeners[l] = struct{}{}
	c.mu.Unlock()
	s.track(c)
	l.sendLocked(NotificationSubscriptionsAcknowledged, SubscriptionsAcknowledgedParams{Meta: l.meta(), Notifications: agreed})
	l.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.listeners, l)
		c.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-l.done:
		// The server is closing the subscription gracefully.
		return &EmptyResult{ResultBase: ResultBase{Meta: l.meta()}}, nil
	}
}
