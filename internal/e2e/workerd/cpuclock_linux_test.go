package workerd_test

import (
	"syscall"
	"time"
	"unsafe"
)

// processCPU is the CPU time pid has used, all its threads together: the
// same account as utime+stime in /proc/PID/stat, read from the process's
// CPU-time clock (clock_getcpuclockid) in nanoseconds instead of /proc's
// 10 ms ticks, which cannot resolve a single request of a few milliseconds.
func processCPU(pid int) (time.Duration, error) {
	const cpuClockSched = 2 // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
	clock := uintptr((^pid)<<3 | cpuClockSched)
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, errno
	}
	return time.Duration(ts.Nano()), nil
}
