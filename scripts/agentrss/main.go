// Command agentrss reports the agent's resident memory when idle: right after
// start, and after it has answered Info and measured one small fp cell.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func rss(pid int) (rssKB, hwmKB int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rssKB, _ = strconv.Atoi(f[1])
		case "VmHWM:":
			hwmKB, _ = strconv.Atoi(f[1])
		}
	}
	return rssKB, hwmKB, nil
}

func main() {
	path := flag.String("agent", "bin/qoslab-agent", "agent binary")
	flag.Parse()
	ctx := context.Background()
	a, err := agent.StartLocal(ctx, agent.LocalOptions{Path: *path, Stderr: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer a.Close()
	report := func(when string) {
		time.Sleep(time.Second)
		r, h, err := rss(a.Pid())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("agent %-28s VmRSS %5.1f MB  VmHWM %5.1f MB  (goal: RSS <= 20 MB)\n", when+":", float64(r)/1024, float64(h)/1024)
	}
	report("idle after start")
	if _, err := a.Info(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := a.Run(ctx, agent.RequestOf(workload.Params{Workload: catalog.FP, QoS: qos.Default, Threads: 2, Params: catalog.Params{Loops: 1e7}}), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report("idle after Info + fp cell")
}
