// child: plain plus a helper process (`sleep 600`) started at launch and never stopped or
// waited for. Its stdio is /dev/null, so the server still exits as plain does; the helper is
// left behind.
package main

import (
	"context"
	"log"
	"os/exec"

	"mcp-kit/{{line}}/internal/pingserver"
)

func main() {
	helper := exec.Command("sleep", "600")
	if err := helper.Start(); err != nil {
		log.Fatalf("helper: %v", err)
	}
	log.Printf("started helper pid %d", helper.Process.Pid)
	if err := pingserver.Serve(context.Background(), pingserver.New("child", false)); err != nil {
		log.Printf("run: %v", err)
	}
	log.Printf("Run returned; main returns (helper still running)")
}
