// Package corpus holds real diagrams written by other people (testdata/: Mermaid blocks from
// public repositories' docs, and graph-tool calls modelled on public architectures, each with its
// source) and the test that converts every one the way the program does, measures the picture
// with diagram/measure and Excalidraw's own restore() check, and compares the report with
// testdata/report.md. docs/diagram-quality.md explains the figures.
//
// The package has no code of its own: everything is in its tests.
package corpus
