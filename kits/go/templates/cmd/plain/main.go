// plain: only the MCP server. Run returns when stdin reaches EOF, main returns, and the
// process exits.
package main

import (
	"context"
	"log"

	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	if err := pingserver.Serve(context.Background(), pingserver.New("plain", false)); err != nil {
		log.Printf("run: %v", err)
	}
	log.Printf("Run returned; main returns")
}
