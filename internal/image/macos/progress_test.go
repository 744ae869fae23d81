package macos

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// fakeClock advances only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressBarTerminal(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	var got []Progress
	b := newProgressBar(&out, "restore.ipsw", unitBytes, func(p Progress) { got = append(got, p) })
	b.terminal, b.now = true, clk.now

	b.update(1<<30, 4<<30) // resumed at 1 GiB
	clk.advance(2 * time.Second)
	b.update(2<<30, 4<<30) // 1 GiB in 2 s this session
	clk.advance(50 * time.Millisecond)
	b.update(2<<30+1, 4<<30) // too soon to redraw
	b.finish()

	assert.Equal(t, Progress{Done: 1 << 30, Total: 4 << 30}, got[0], "no rate before a second has passed")
	assert.InDelta(t, float64(512<<20), got[1].Rate, 1, "resumed bytes do not count toward the rate")
	assert.Equal(t, 4*time.Second, got[1].ETA)
	assert.Equal(t, 0.5, got[1].Fraction())

	frames := strings.Split(out.String(), "\r\033[K")
	assert.Len(t, frames, 4, "two draws, no draw for the update 50 ms later, the final draw")
	assert.Equal(t, "restore.ipsw [============            ]  50.0%  2.0 GiB / 4.0 GiB  512.0 MiB/s  ETA 4s", frames[2])
	assert.True(t, strings.HasSuffix(out.String(), "\n"), "finish ends the line")
}

func TestProgressBarLog(t *testing.T) {
	var out bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	b := newProgressBar(&out, "installing macOS 14.4.1 (23E224)", unitFraction, nil)
	b.now = clk.now
	for i := 0; i <= 1000; i += 100 {
		b.update(int64(i), 1000)
		clk.advance(2 * time.Second)
	}
	b.finish()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// 20 s of updates every 2 s: a line at 0 s, 10 s and 20 s; the final
	// state is already shown.
	assert.Equal(t, []string{
		"installing macOS 14.4.1 (23E224) 0.0%",
		"installing macOS 14.4.1 (23E224) 50.0%  ETA 10s",
		"installing macOS 14.4.1 (23E224) 100.0%",
	}, lines)
}

func TestFormatBytes(t *testing.T) {
	assert.Equal(t, "512 B", formatBytes(512))
	assert.Equal(t, "1.5 KiB", formatBytes(1536))
	assert.Equal(t, "64.0 GiB", formatBytes(64<<30))
	assert.Equal(t, "2.0 TiB", formatBytes(2<<40))
}
