package scene

// FocusOf returns the focus Excalidraw stores for an arrow end at end bound to t, when the arrow
// arrives there from adj, its neighbouring point (determineFocusDistance): 0 aims at t's centre,
// ±1 at its outline. Builders that compute their own routes bind with it.
func FocusOf(t Element, adj, end Point) float64 { return focusOf(&t, adj, end) }
