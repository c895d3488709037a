// lingering: what does keep a Go server alive. The MCP server runs in a goroutine and main
// waits for SIGTERM/SIGINT instead of for Run, the way many long-running Go services are
// written. Run returns on stdin EOF, but nothing tells main.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ticks := 0
	ticker := time.NewTicker(time.Second)
	go func() {
		for range ticker.C {
			ticks++
		}
	}()
	go func() {
		if err := pingserver.Serve(ctx, pingserver.New("lingering", false)); err != nil {
			log.Printf("run: %v", err)
		}
		log.Printf("Run returned; main keeps waiting for a signal")
	}()
	<-ctx.Done()
	log.Printf("signal received; exiting")
}
