// Package layering holds the test of the import rules between the project's packages: which
// package may import which, so that imports point down the stack (see DEVELOPERS.md).
package layering
