// slow-tool: plain plus a tool `slow` that answers "done" after 3 s, for the `inflight`
// ending (a request still running when stdin closes).
package main

import (
	"context"
	"log"

	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	if err := pingserver.Serve(context.Background(), pingserver.New("slow-tool", true)); err != nil {
		log.Printf("run: %v", err)
	}
	log.Printf("Run returned; main returns")
}
