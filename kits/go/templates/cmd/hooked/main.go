// hooked: the lingering shape with the SDK's own end of the session wired to exit: a goroutine
// waits on ServerSession.Wait (it returns when the session ends, on stdin EOF) and calls
// os.Exit(0); main itself blocks forever and nothing handles a signal.
package main

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	session, err := pingserver.New("hooked", false).Connect(context.Background(), &mcp.StdioTransport{}, nil)
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	go func() {
		err := session.Wait()
		log.Printf("session ended (%v); exiting", err)
		os.Exit(0)
	}()
	ticks := 0
	ticker := time.NewTicker(time.Second)
	for range ticker.C {
		ticks++
	}
}
