// stubborn: Run returns on stdin EOF, but main then blocks forever, and SIGTERM is caught,
// "cleaned up" after and ignored. Only SIGKILL ends it.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM)
	go func() {
		for range signals {
			log.Printf("SIGTERM: cleaning up (and not exiting)")
		}
	}()
	if err := pingserver.Serve(context.Background(), pingserver.New("stubborn", false)); err != nil {
		log.Printf("run: %v", err)
	}
	log.Printf("Run returned; blocking forever")
	select {}
}
