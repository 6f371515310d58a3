package console

import (
	"fmt"
	"time"
)

// The console writes every duration one way per language, the same in
// the execution's header, the events table, the lists and the graph's
// panel (formatDuration in static/console.js follows the same rule):
//
//	under 1 s:      0.437s    0.437秒
//	under 10 s:     2.70s     2.70秒
//	under a minute: 49.4s     49.4秒
//	under an hour:  1m 49s    1分49秒
//	longer:         2h 3m 4s  2時間3分4秒
func formatDuration(lang string, d time.Duration) string {
	if d < 0 {
		d = 0
	}
	ja := lang == "ja"
	sec := "s"
	if ja {
		sec = "秒"
	}
	ms := d.Milliseconds()
	switch {
	case ms < 1000:
		return fmt.Sprintf("%.3f%s", float64(ms)/1000, sec)
	case ms < 10000:
		return fmt.Sprintf("%.2f%s", float64(ms/10)/100, sec)
	case ms < 60000:
		return fmt.Sprintf("%.1f%s", float64(ms/100)/10, sec)
	}
	s := (ms + 500) / 1000
	h, m := s/3600, s%3600/60
	s %= 60
	switch {
	case ja && h > 0:
		return fmt.Sprintf("%d時間%d分%d秒", h, m, s)
	case ja:
		return fmt.Sprintf("%d分%d秒", m, s)
	case h > 0:
		return fmt.Sprintf("%dh %dm %ds", h, m, s)
	}
	return fmt.Sprintf("%dm %ds", m, s)
}

func init() {
	funcs["duration"] = func(lang string, ms int64) string { return formatDuration(lang, time.Duration(ms)*time.Millisecond) }
}
