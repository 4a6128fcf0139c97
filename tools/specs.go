package tools

import (
	"encoding/json"
	"strings"
)

// Schemas are written for small local models: flat objects, enums instead of free strings,
// short descriptions with concrete example ids. Property text is shared between tools so a
// field means the same everywhere.
var (
	propID      = `{"type":"string","description":"Short id you choose, e.g. \"r1\", \"db\", \"a1\". Use it later to refer to the element."}`
	propType    = `{"type":"string","enum":["rectangle","ellipse","diamond","text","arrow","line","frame"]}`
	propX       = `{"type":"number","description":"Left edge in px (x grows to the right)."}`
	propY       = `{"type":"number","description":"Top edge in px (y grows downwards)."}`
	propW       = `{"type":"number","description":"Width in px, e.g. 160. Optional: shapes grow to fit their text."}`
	propH       = `{"type":"number","description":"Height in px, e.g. 80."}`
	propText    = `{"type":"string","description":"Label drawn inside the shape or on the arrow; for type text, the text itself. Use \\n for a new line."}`
	propStroke  = `{"type":"string","description":"Line and text colour: a name like \"blue\", \"red\", \"gray-dark\" or hex \"#1971c2\"."}`
	propBg      = `{"type":"string","description":"Fill colour: \"blue\" (light fill), \"green\", \"yellow-lightest\", \"transparent\" or hex."}`
	propFill    = `{"type":"string","enum":["solid","hachure","cross-hatch","zigzag"]}`
	propSStyle  = `{"type":"string","enum":["solid","dashed","dotted"]}`
	propSWidth  = `{"type":"number","enum":[1,2,4],"description":"Line thickness: 1 thin, 2 normal, 4 bold."}`
	propRough   = `{"type":"number","enum":[0,1,2],"description":"0 clean lines, 1 hand-drawn (default), 2 sketchy."}`
	propOpacity = `{"type":"number","description":"0 to 100 (default 100)."}`
	propFSize   = `{"type":"number","description":"Font size: 16 small, 20 normal (default), 28 large, 36 title."}`
	propFFamily = `{"type":"string","enum":["excalifont","nunito","lilita","comic","liberation","cascadia","virgil","helvetica"],"description":"Font; default excalifont (hand-drawn)."}`
	propStartID = `{"type":"string","description":"Arrow/line: id of the shape it starts at, e.g. \"r1\" (may be created earlier in the same batch)."}`
	propEndID   = `{"type":"string","description":"Arrow/line: id of the shape it points to, e.g. \"r2\"."}`
	propHead    = `{"type":"string","enum":["arrow","triangle","bar","dot","none"]}`
	propPoints  = `{"type":"array","items":{"type":"array","items":{"type":"number"}},"description":"Free arrow/line only: points relative to x,y, e.g. [[0,0],[200,0]]."}`
	propFrame   = `{"type":"string","description":"Id of a frame to place the element in."}`
	propLocked  = `{"type":"boolean"}`
	propIDs     = `{"type":"array","items":{"type":"string"},"description":"Element ids, e.g. [\"r1\",\"r2\"]."}`
)

// styleProps are the properties shared by create and update.
var styleProps = [][2]string{
	{"x", propX}, {"y", propY}, {"width", propW}, {"height", propH}, {"text", propText},
	{"strokeColor", propStroke}, {"backgroundColor", propBg}, {"fillStyle", propFill},
	{"strokeStyle", propSStyle}, {"strokeWidth", propSWidth}, {"roughness", propRough},
	{"opacity", propOpacity}, {"fontSize", propFSize}, {"fontFamily", propFFamily},
	{"startElementId", propStartID}, {"endElementId", propEndID},
	{"startArrowhead", propHead}, {"endArrowhead", propHead}, {"points", propPoints},
	{"frameId", propFrame}, {"locked", propLocked},
}

// schema builds a JSON Schema object from ordered (name, schema) pairs. Order is kept so the
// most important fields come first in what the model reads.
func schema(required []string, props ...[2]string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + p[0] + `":` + p[1])
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		b.WriteString(`,"required":["` + strings.Join(required, `","`) + `"]`)
	}
	b.WriteString(`}`)
	return json.RawMessage(b.String())
}

func elementProps(withIDType bool) [][2]string {
	var props [][2]string
	if withIDType {
		props = append(props, [2]string{"id", propID}, [2]string{"type", propType})
	}
	return append(props, styleProps...)
}

// terseProps drops the descriptions of props, keeping types and enums: create_element and
// update_element point to batch_create_elements for the meaning, which saves a small model's
// context about 3 KB on every request.
func terseProps(props [][2]string) [][2]string {
	out := make([][2]string, len(props))
	for i, p := range props {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(p[1]), &m); err != nil {
			panic("tools: bad property schema " + p[0] + ": " + err.Error())
		}
		if p[0] != "strokeColor" && p[0] != "backgroundColor" { // the most edited fields keep theirs
			delete(m, "description")
		}
		b, _ := json.Marshal(m)
		out[i] = [2]string{p[0], string(b)}
	}
	return out
}

func elementItemSchema() string {
	return string(schema([]string{"id", "type"}, elementProps(true)...))
}

// toolDoc is one tool's name, description and schema, in the order the model sees them.
type toolDoc struct {
	name, desc string
	params     json.RawMessage
}

var toolDocs = []toolDoc{
	{ReadDiagramGuide, "Read this first: sizes, spacing, colours and how to connect shapes.", schema(nil)},
	{GetScene, "Show what is on the canvas: one line per element (id, type, x,y, width x height, label, style), the arrows between shapes, and warnings to fix.", schema(nil)},
	graphDocs[0], graphDocs[1], graphDocs[2], graphDocs[3], graphDocs[4], graphDocs[5],
	{CreateFromMermaid, "Draw a whole diagram from Mermaid text: flowchart, sequenceDiagram, classDiagram, stateDiagram-v2 or erDiagram become editable shapes and bound arrows (other types become one picture). Placed right of the current drawing; replace:true draws it instead. " +
		"Example: {\"mermaid\":\"flowchart LR\\n  A[Client] -->|HTTP| B[API]\\n  B --> C[(DB)]\"}. A syntax error names the line to fix.",
		schema([]string{"mermaid"}, [2]string{"mermaid", `{"type":"string","description":"The Mermaid diagram, starting with its type, e.g. \"flowchart TD\" or \"sequenceDiagram\"."}`},
			[2]string{"replace", `{"type":"boolean","description":"true: clear the canvas first (default false: add beside)."}`})},
	{BatchCreateElements, "Create many elements at once, placed by x and y. Shapes take their label in text; arrows connect shapes by id, no x/y needed. " +
		"E.g. {\"elements\":[{\"id\":\"r1\",\"type\":\"rectangle\",\"x\":0,\"y\":0,\"text\":\"API\"},{\"id\":\"r2\",\"type\":\"rectangle\",\"x\":0,\"y\":200,\"text\":\"DB\"},{\"id\":\"a1\",\"type\":\"arrow\",\"startElementId\":\"r1\",\"endElementId\":\"r2\"}]}",
		schema([]string{"elements"}, [2]string{"elements", `{"type":"array","items":` + elementItemSchema() + `}`})},
	{CreateElement, "Create one element. Same fields, with the same meaning, as one item of batch_create_elements, e.g. {\"id\":\"r3\",\"type\":\"ellipse\",\"x\":300,\"y\":0,\"text\":\"User\"}.",
		schema([]string{"id", "type"}, append([][2]string{{"id", propID}}, terseProps(elementProps(true)[1:])...)...)},
	{UpdateElement, "Change an element: give its id and only the fields to change (meanings as in batch_create_elements), e.g. {\"id\":\"r1\",\"backgroundColor\":\"red\"} or {\"id\":\"r1\",\"x\":400}. Arrows follow moved shapes.",
		schema([]string{"id"}, append([][2]string{{"id", `{"type":"string","description":"Id of the element to change, e.g. \"r1\"."}`}}, terseProps(styleProps)...)...)},
	{DeleteElements, "Delete elements by id. A shape's label goes with it; arrows attached to it are deleted too.",
		schema([]string{"ids"}, [2]string{"ids", propIDs})},
	{GetElement, "Show every property of one element, e.g. {\"id\":\"r1\"}.",
		schema([]string{"id"}, [2]string{"id", `{"type":"string"}`})},
	{QueryElements, "Find elements: by type, ids, area, or label text (all given filters must match). E.g. {\"text\":\"database\"} or {\"area\":{\"x\":0,\"y\":0,\"width\":800,\"height\":600}}.",
		schema(nil, [2]string{"type", propType}, [2]string{"ids", propIDs},
			[2]string{"area", `{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"width":{"type":"number"},"height":{"type":"number"}},"description":"Elements overlapping this box."}`},
			[2]string{"text", `{"type":"string","description":"Part of a label, any case."}`})},
	{GroupElements, "Group elements so they move together, e.g. {\"ids\":[\"r1\",\"r2\"],\"groupId\":\"g1\"}.",
		schema([]string{"ids"}, [2]string{"ids", propIDs}, [2]string{"groupId", `{"type":"string","description":"Id for the group, e.g. \"g1\" (optional)."}`})},
	{UngroupElements, "Dissolve a group, e.g. {\"groupId\":\"g1\"}, or the groups of some elements, e.g. {\"ids\":[\"r1\"]}. The elements stay.",
		schema(nil, [2]string{"groupId", `{"type":"string"}`}, [2]string{"ids", propIDs})},
	{AlignElements, "Line elements up, e.g. {\"ids\":[\"r1\",\"r2\",\"r3\"],\"alignment\":\"top\"}. Arrows follow.",
		schema([]string{"ids", "alignment"}, [2]string{"ids", propIDs},
			[2]string{"alignment", `{"type":"string","enum":["left","center","right","top","middle","bottom"]}`})},
	{DistributeElements, "Space 3 or more elements evenly, e.g. {\"ids\":[\"r1\",\"r2\",\"r3\"],\"direction\":\"horizontal\"}.",
		schema([]string{"ids", "direction"}, [2]string{"ids", propIDs},
			[2]string{"direction", `{"type":"string","enum":["horizontal","vertical"]}`})},
	{LockElements, "Lock elements so they cannot be changed until unlocked.", schema([]string{"ids"}, [2]string{"ids", propIDs})},
	{UnlockElements, "Unlock locked elements.", schema([]string{"ids"}, [2]string{"ids", propIDs})},
	{SnapshotScene, "Save the canvas under a name to come back to it, e.g. {\"name\":\"before-colors\"}.",
		schema([]string{"name"}, [2]string{"name", `{"type":"string"}`})},
	{RestoreSnapshot, "Put the canvas back to a saved snapshot, e.g. {\"name\":\"before-colors\"}.",
		schema([]string{"name"}, [2]string{"name", `{"type":"string"}`})},
	{SetViewport, "Choose what the picture shows: {\"ids\":[\"r1\",\"r2\"]} fits those elements, {\"x\":0,\"y\":0,\"width\":800,\"height\":600} an area, {} the whole scene.",
		schema(nil, [2]string{"ids", propIDs}, [2]string{"x", propX}, [2]string{"y", propY}, [2]string{"width", propW}, [2]string{"height", propH})},
	{ClearCanvas, "Delete everything on the canvas. A snapshot named \"before-clear\" is saved first.", schema(nil)},
	{Done, "Call when the diagram is finished. Put a one-line summary for the user in summary.",
		schema(nil, [2]string{"summary", `{"type":"string"}`})},
}

// toolNames lists every tool name, for suggestions on unknown tools.
func toolNames() []string {
	names := make([]string, len(toolDocs))
	for i, d := range toolDocs {
		names[i] = d.name
	}
	return names
}
