// ticker: plain plus a goroutine on a 1 s time.Ticker (a cache refresher, a log flusher).
// Unlike a Node timer it does not keep the process alive: Go exits when main returns,
// whatever other goroutines do.
package main

import (
	"context"
	"log"
	"time"

	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	ticks := 0
	ticker := time.NewTicker(time.Second)
	go func() {
		for range ticker.C {
			ticks++ // background work; deliberately quiet
		}
	}()
	if err := pingserver.Serve(context.Background(), pingserver.New("ticker", false)); err != nil {
		log.Printf("run: %v", err)
	}
	log.Printf("Run returned; main returns (ticker goroutine still running)")
}
