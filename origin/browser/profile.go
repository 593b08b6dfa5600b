package browser

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// profilePrefs are preferences Chromium has no switch for (any more): the
// --force-webrtc-ip-handling-policy switch is gone from current builds, and
// only the profile preference keeps WebRTC from sending UDP around the proxy.
// The browser contexts jobs run in inherit them.
var profilePrefs = map[string]any{
	"webrtc":                map[string]any{"ip_handling_policy": "disable_non_proxied_udp"},
	"net":                   map[string]any{"network_prediction_options": 2}, // no preconnect, no prefetch of predicted pages
	"dns_prefetching":       map[string]any{"enabled": false},
	"safebrowsing":          map[string]any{"enabled": false},
	"search":                map[string]any{"suggest_enabled": false},
	"alternate_error_pages": map[string]any{"enabled": false},
	"profile": map[string]any{"default_content_setting_values": map[string]any{
		"notifications": 2, "geolocation": 2, "media_stream_camera": 2, "media_stream_mic": 2,
	}},
}

// newProfile makes a fresh user data directory with profilePrefs.
func newProfile() (string, error) {
	dir, err := os.MkdirTemp("", "agentready-chromium-")
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(profilePrefs)
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, "Default"), 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "Default", "Preferences"), b, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// killProfile kills every process still running with the profile directory
// (Chromium's helpers can outlive a killed browser process) and removes it.
func killProfile(dir string) {
	want := []byte("--user-data-dir=" + dir)
	deadline := time.Now().Add(2 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); {
		if killUsing(want) == 0 {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func killUsing(arg []byte) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for a := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(a, arg) {
				syscall.Kill(pid, syscall.SIGKILL)
				n++
				break
			}
		}
	}
	return n
}
