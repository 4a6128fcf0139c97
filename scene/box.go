package scene

// A group box is how a diagram draws a group that can nest, where Excalidraw's frames cannot: a
// rectangle in the Excalidraw group named after itself, BoxGroupPrefix + its id, which its title
// and its members share. Both the graph builder and the measurer read boxes, so the convention
// lives here once.

// BoxGroupPrefix starts the Excalidraw group id a box shares with its members.
const BoxGroupPrefix = "grp-"

// BoxGroup is the Excalidraw group id of the box boxID.
func BoxGroup(boxID string) string { return BoxGroupPrefix + boxID }

// IsGroupBox reports whether e is a group's box: a rectangle in the Excalidraw group named after it.
func IsGroupBox(e *Element) bool {
	return e.Type == Rectangle && e.InGroup(BoxGroup(e.ID))
}
