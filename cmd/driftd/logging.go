package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/lmittmann/tint"
)

// logFlags are --log.format and --log.level, as in every Prometheus exporter.
type logFlags struct {
	format, level string
}

func addLogFlags(cmd *kingpin.CmdClause) *logFlags {
	f := &logFlags{}
	cmd.Flag("log.format", "Log format: text (for people; colour only on a terminal) or json (for machines).").Default("text").EnumVar(&f.format, "text", "json")
	cmd.Flag("log.level", "Only log messages at or above this level: debug, info, warn, error.").Default("info").EnumVar(&f.level, "debug", "info", "warn", "error")
	return f
}

// logger builds the one base logger; components add With("component", …).
func (f *logFlags) logger(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(f.level))
	if f.format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.DateTime, NoColor: !isTerminal(w)}))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
