package host

import (
	"context"

	"github.com/toolwire/toolwire/tool"
)

// AwaitTask follows a task of the named server (MCP's Tasks extension) to
// its result, as the call that started it would have: a program that kept
// the task's id (TaskStarted) resumes it after a restart. The server
// answers for the caller that created the task only.
func (h *Host) AwaitTask(ctx context.Context, server, taskID string) (*tool.Result, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, err
	}
	sess, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sess.AwaitTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return res.ToolResult(), nil
}
