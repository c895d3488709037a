// fixed: the lingering shape done right. main waits for Run itself and for SIGTERM/SIGINT;
// every path ends in one guarded shutdown(reason) that runs once, logs the reason, stops the
// session and exits 0.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"mcp-kit/{{line}}/internal/pingserver"
)

var (
	shutdownOnce sync.Once
	cancelRun    context.CancelFunc
	runDone      = make(chan struct{})
)

// shutdown runs once. It cancels Run, waits briefly for it (bounded: a read pending on a
// still-open stdin cannot be interrupted), then exits 0.
func shutdown(reason string) {
	shutdownOnce.Do(func() {
		log.Printf("shutdown: %s", reason)
		cancelRun()
		select {
		case <-runDone:
		case <-time.After(500 * time.Millisecond):
		}
		os.Exit(0)
	})
}

func main() {
	server := pingserver.New("fixed", false)
	var ctx context.Context
	ctx, cancelRun = context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	go func() {
		if sig := <-signals; sig == syscall.SIGTERM {
			shutdown("sigterm")
		} else {
			shutdown("sigint")
		}
	}()
	ticks := 0
	ticker := time.NewTicker(time.Second)
	go func() {
		for range ticker.C {
			ticks++
		}
	}()
	err := pingserver.Serve(ctx, server)
	close(runDone)
	if err != nil && ctx.Err() == nil {
		log.Printf("run: %v", err)
	}
	shutdown("stdin-eof")
}
