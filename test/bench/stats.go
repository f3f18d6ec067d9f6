package main

import (
	"slices"
	"time"
)

// number is what median takes.
type number interface {
	~int | ~int64 | ~float64
}

// median is the middle of xs (the mean of the two middles for an even
// count); 0 for none.
func median[T number](xs []T) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return float64(s[m])
	}
	return (float64(s[m-1]) + float64(s[m])) / 2
}

// mean is the average of xs; 0 for none.
func mean[T number](xs []T) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += float64(x)
	}
	return t / float64(len(xs))
}

// dur rounds ns to a precision a reader can compare.
func dur(ns float64) time.Duration {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
