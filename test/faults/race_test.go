//go:build race

package faults_test

// raceEnabled: the test's own servers run under the race detector, which
// slows them several times over; the daemon half then measures the
// machine, not driftd (whose binary is built without -race).
const raceEnabled = true
