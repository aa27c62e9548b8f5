package testcluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports for the cluster's components come from below the kernel's
// ephemeral range: a port of that range, found free and closed again, can
// be taken as the source port of any outgoing connection before the
// component listens on it ("bind: address already in use"), and a machine
// running many tests makes many connections. Ports handed out stay
// reserved for the process, so that clusters started at once never share
// one.
var (
	reservedMu sync.Mutex
	reserved   = map[int]bool{}
)

// lowestPort is the lowest port handed out: above the well-known and the
// usual registered ports of local services.
const lowestPort = 20000

// freePorts returns n loopback ports free now, reserved for the process.
func freePorts(n int) ([]int, error) {
	reservedMu.Lock()
	defer reservedMu.Unlock()
	high := ephemeralLow() - 1
	if high <= lowestPort+n {
		return freeEphemeralPorts(n)
	}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("finding %d free loopback ports under %d: too many in use", n, high+1)
		}
		port := lowestPort + rand.IntN(high-lowestPort+1) //nolint:gosec // a port, not a secret
		if reserved[port] {
			continue
		}
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l.Close()
		reserved[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralLow is the lowest port of the kernel's ephemeral range (Linux's
// default where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if low, err := strconv.Atoi(f[0]); err == nil {
				return low
			}
		}
	}
	return 32768
}

// freeEphemeralPorts asks the kernel for n free ports, where the ephemeral
// range leaves none below it.
func freeEphemeralPorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
