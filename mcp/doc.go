// Package mcp implements the Model Context Protocol: a Server that serves
// tools, resources and prompts, and (in its own files) a Client, over stdio,
// Streamable HTTP and the deprecated HTTP+SSE transport.
//
// Both eras of the protocol are spoken by one implementation: the stateless
// 2026-07-28 revision, where every request carries its protocol version and
// client capabilities in _meta, and the legacy revisions (2025-11-25 back to
// 2024-11-05) that open a session with initialize. A server picks the era
// from how each client opens, so old and new clients share one endpoint.
//
// # Files
//
// The package is one, filed by side and transport:
//
//	doc.go                 this map
//	types.go               the protocol's types and versions, for both sides
//	encode.go              hand-written JSON for tools/call, both directions
//	telemetry.go           OpenTelemetry instruments shared by both sides
//	xmcpheader.go          x-mcp-header: checking annotations, Mcp-Param-* values
//	inmemory.go            InMemoryTransport: a client and server in one process
//
//	server.go              Server: tools, resources, prompts, limits, paging
//	server_conn.go         one client as the server sees it; its requests
//	server_dispatch.go     requests to handlers: decoding, one method each
//	server_context.go      what a handler asks of its request (Elicit, State…)
//	server_listen.go       subscriptions/listen streams of notifications
//	server_state.go        sealed request state for input-required rounds
//	server_statekey.go     ReadStateKey
//	server_info.go         serverInfo in results' _meta
//	server_tasks.go        the Tasks extension: tasks/get, update, cancel
//	server_taskrun.go      a tool call running as a task
//	server_taskstore.go    TaskStore and MemoryTaskStore
//	server_telemetry.go    server spans; trace context read from _meta
//	server_workers.go      the goroutine pool requests run on
//	server_stdio.go        ServeStdio, ServeStream: the stdio transport
//	server_http.go         HTTPConfig, NewHTTPEndpoints, RunHTTPServer
//	server_sse.go          SSEHandler: the deprecated HTTP+SSE transport
//	streamable_server.go   HTTPHandler: Streamable HTTP, Origin checks, sessions
//	streamable_sse.go      SSE writer, replay log, POST and standalone streams
//
//	client.go              Client, ClientSession: handshake, Call, lists
//	client_conn.go         a program's ClientConn under a session, and back
//	client_tasks.go        following tasks to their result
//	client_telemetry.go    client spans; trace context written to _meta
//	client_stdio.go        CommandTransport: a server as a child process
//	client_http.go         HTTPTransport: Streamable HTTP; the SSE reader
//	client_sse.go          SSETransport: the deprecated HTTP+SSE transport
//	pipesize_*.go          larger stdio pipes (Linux)
//	procgroup_*.go         child servers in a process group of their own
package mcp
