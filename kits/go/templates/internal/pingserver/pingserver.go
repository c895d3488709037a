// Package pingserver builds the server every shape shares: one tool, `ping`, that returns
// "pong" (and, for the slow-tool shape, `slow`, which answers after 3 s), written against the
// v1 API (NewServer with an Implementation, AddTool with a typed handler, StdioTransport),
// stable since v0.3.0. Nothing here writes to stdout (the MCP wire); logs go to stderr.
package pingserver

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noInput struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// New returns a server named after the shape with `ping` (and `slow` if asked) registered.
func New(shape string, slow bool) *mcp.Server {
	log.SetOutput(os.Stderr)
	log.SetPrefix("{{line}}-{{label}}-" + shape + ": ")
	log.SetFlags(log.Lmicroseconds)
	server := mcp.NewServer(&mcp.Implementation{Name: "{{line}}-{{label}}-" + shape, Version: "0.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ping", Description: "Answers pong"},
		func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
			return text("pong"), nil, nil
		})
	if slow {
		mcp.AddTool(server, &mcp.Tool{Name: "slow", Description: "Answers done after 3 s"},
			func(context.Context, *mcp.CallToolRequest, noInput) (*mcp.CallToolResult, any, error) {
				time.Sleep(3 * time.Second)
				return text("done"), nil, nil
			})
	}
	return server
}

// Serve runs the server on stdin/stdout until the session ends (stdin EOF) or ctx is done.
func Serve(ctx context.Context, server *mcp.Server) error {
	return server.Run(ctx, &mcp.StdioTransport{})
}
