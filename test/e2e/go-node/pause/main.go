// pause is the process of every pod sandbox on the e2e node (containerd's sandbox_image): it holds
// the pod's namespaces open until it is told to stop, as registry.k8s.io/pause does, and reaps the
// children a shared process namespace may leave it. Test tooling, never part of the product.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
