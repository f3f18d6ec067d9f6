package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/lmittmann/tint"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
)

// logFormats are --log.format's values: promslog's two, as every
// Prometheus component has them, and tint's text for people.
var logFormats = []string{"logfmt", "json", "text"}

// logFlags are --log.format and --log.level, as in every Prometheus
// exporter; the level is promslog's type whatever the format.
type logFlags struct {
	format string
	level  *promslog.Level
}

// addLogFlags adds the flags with format as --log.format's default: run
// defaults to logfmt like Prometheus (its logs go to a collector), demo
// to text (a person is watching it).
func addLogFlags(cmd *kingpin.CmdClause, format string) *logFlags {
	f := &logFlags{level: promslog.NewLevel()}
	cmd.Flag(promslogflag.FormatFlagName, "Output format of log messages: logfmt or json (promslog, as Prometheus writes them), or text (for people; colour only on a terminal and without NO_COLOR).").
		Default(format).EnumVar(&f.format, logFormats...)
	cmd.Flag(promslogflag.LevelFlagName, promslogflag.LevelFlagHelp).
		Default("info").HintOptions(promslog.LevelFlagOptions...).SetValue(f.level)
	return f
}

// logger builds the one base logger; components add With("component", …).
func (f *logFlags) logger(w io.Writer) *slog.Logger {
	if f.format == "text" {
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: f.level, TimeFormat: time.DateTime, NoColor: !colour(w)}))
	}
	format := promslog.NewFormat()
	_ = format.Set(f.format) // the enum admits only what promslog knows
	return promslog.New(&promslog.Config{Level: f.level, Format: format, Writer: w})
}

// colour reports whether w gets ANSI colour: only a terminal, and never
// when NO_COLOR is set to anything (https://no-color.org).
func colour(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
