//go:build !linux

package workerd_test

import (
	"errors"
	"time"
)

func processCPU(int) (time.Duration, error) {
	return 0, errors.New("reading another process's CPU time is implemented for Linux only")
}
