//go:build !race

package corpus

// raceDetector is whether the tests run under the race detector, which slows the JavaScript
// interpreter ELK runs in about fivefold.
const raceDetector = false
