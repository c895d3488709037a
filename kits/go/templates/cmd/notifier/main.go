// notifier: a goroutine sends a progress notification through the session every 200 ms
// (ServerSession.Log sends nothing until the client sets a level), and main blocks forever.
// Go's runtime kills a program whose write to a broken fd 1 fails with EPIPE (SIGPIPE), so
// after its client died this is ended by the first write the SDK still makes; a failed send
// is logged and the loop goes on.
package main

import (
	"context"
	"log"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	ctx := context.Background()
	session, err := pingserver.New("notifier", false).Connect(ctx, &mcp.StdioTransport{}, nil)
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	n := 0.0
	for range time.NewTicker(200 * time.Millisecond).C {
		n++
		params := &mcp.ProgressNotificationParams{ProgressToken: "kit-notifier", Progress: n}
		if err := session.NotifyProgress(ctx, params); err != nil {
			log.Printf("send failed: %v", err)
		}
	}
}
