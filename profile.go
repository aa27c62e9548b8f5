package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"sync/atomic"
	"time"
)

// profileDirEnv names a directory where each provider process writes its
// CPU profile (cpu-<pid>.pprof), the heap profile of its peak live heap
// (heap-peak-<pid>.pprof) and, when it exits, its allocation profile
// (heap-<pid>.pprof) and its garbage collector's figures (gc-<pid>.txt):
// what planbench -profile reads.
const profileDirEnv = "HELMRELEASE_PROFILE_DIR"

// startProfiles starts the profiles in dir; stop ends them and writes
// what is written at exit.
func startProfiles(dir string) (stop func(), err error) {
	pid := os.Getpid()
	file := func(name string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.%s", name, pid, "pprof")) }
	cpu, err := os.Create(file("cpu"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", profileDirEnv, err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, fmt.Errorf("%s: starting the CPU profile: %w", profileDirEnv, err)
	}
	var peakLive, peakGoroutines atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/sched/goroutines:goroutines"}}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var written uint64
		for {
			metrics.Read(sample)
			for i, peak := range []*atomic.Uint64{&peakLive, &peakGoroutines} {
				if v := sample[i].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > peak.Load() {
					peak.Store(v.Uint64())
				}
			}
			// The heap profile's in-use figures are those of the last
			// collection: written when it found a new peak, they say
			// what was live then.
			if live := peakLive.Load(); live > written+1<<20 {
				writeProfile(file("heap-peak"), "heap")
				written = live
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-sampled
		pprof.StopCPUProfile()
		_ = cpu.Close()
		writeProfile(file("heap"), "allocs")
		gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(gc)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("gc-%d.txt", pid)), fmt.Appendf(nil,
			"peak live heap %d MiB\npeak goroutines %d\ngc cycles %d\ngc CPU %.2f s of %.2f s\nallocated %d MiB\n",
			peakLive.Load()>>20, peakGoroutines.Load(), gc[0].Value.Uint64(), gc[1].Value.Float64(), gc[2].Value.Float64(), gc[3].Value.Uint64()>>20), 0o600)
	}, nil
}

func writeProfile(path, name string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	_ = pprof.Lookup(name).WriteTo(f, 0)
	_ = f.Close()
}
