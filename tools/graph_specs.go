package tools

// Schemas of the graph tools: flat items with enums, no coordinates anywhere, so a small model
// describes structure and the layout engine does the geometry. Every byte of a core tool's schema
// is sent with every request (agent.CoreTools, 9 KB budget), so add_to_graph names its items'
// fields without repeating create_graph's enums.
var (
	// A node: its label alone, or an object when it needs an id (two nodes with one label), a
	// shape or a colour.
	gpNode  = `{"anyOf":[{"type":"string"},{"type":"object","properties":{"label":{"type":"string"},"id":{"type":"string"},"shape":{"type":"string","enum":["rectangle","ellipse","diamond"]},"color":{"type":"string"}},"required":["label"]}]}`
	gpNodes = `{"type":"array","items":` + gpNode + `}`
	// A group's nodes and add_to_graph's items name their forms only: create_graph's nodes, offered
	// beside them, have the node's fields.
	gpNodesT = `{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"object"}]}}`
	gpEdges  = `{"type":"array","items":{"type":"string"}}`
	// Groups hold their nodes; style box (a light background box, nestable with parent) or frame (the default).
	gpGroups  = `{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"nodes":` + gpNodesT + `,"parent":{"type":"string"},"style":{"type":"string","enum":["frame","box"]},"id":{"type":"string"}},"required":["title"]}}`
	gpGroupsT = `{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"nodes":{"type":"array"}}}}`
	gpDir     = `{"type":"string","enum":["TB","LR","mindmap"]}`
	gpEdgeUpd = `{"type":"array","items":{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"label":{"type":"string"},"style":{"type":"string","enum":["solid","dashed","dotted"]},"arrow":{"type":"string","enum":["end","both","none"]}},"required":["from","to"]}}`
	gpUpd     = `{"type":"array","items":{"type":"object","properties":{"node":{"type":"string","description":"Id or label of the node."},"label":{"type":"string"},"shape":{"type":"string","enum":["rectangle","ellipse","diamond"]},"color":{"type":"string"},"group":{"type":"string","description":"Move into this group (\"\" to take it out)."}},"required":["node"]}}`
	gpRefs    = `{"type":"array","items":{"type":"string"},"description":"Node ids or labels."}`
	// A sequence step: a message, a note or a block (whose messages are steps again).
	gpStep = `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"label":{"type":"string"},"style":{"type":"string","enum":["solid","dashed"]},` +
		`"activate":{"type":"boolean"},"deactivate":{"type":"boolean"},"return":{"type":"boolean"},"note":{"type":"string"},"over":{"type":"string"},"left_of":{"type":"string"},"right_of":{"type":"string"},` +
		`"block":{"type":"string","enum":["loop","alt","opt","par","critical","break"]},"messages":{"type":"array","items":{"type":"object"}},"else":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"},"messages":{"type":"array","items":{"type":"object"}}}}}}}`
)

var graphDocs = [...]toolDoc{
	{CreateGraph, "Draw a boxes-and-arrows diagram (flowchart, architecture, org chart); it places everything. " +
		"Node: its label, or {label, id, shape, color}. Group: {title, nodes, parent}. Edge: \"A -> B: label\" (A, B: labels or ids).",
		schema(nil, [2]string{"direction", gpDir}, [2]string{"groups", gpGroups}, [2]string{"nodes", gpNodes}, [2]string{"edges", gpEdges})},
	{AddToGraph, "Add nodes, groups and edges (as in create_graph) beside their neighbours. Other nodes stay put.",
		schema(nil, [2]string{"groups", gpGroupsT}, [2]string{"nodes", gpNodesT}, [2]string{"edges", gpEdges})},
	{UpdateGraph, "Change nodes (label, shape, color, group) and edges (label, style, arrow) found by id or label, e.g. {\"nodes\":[{\"node\":\"API\",\"color\":\"green\",\"group\":\"Backend\"}],\"edges\":[{\"from\":\"api\",\"to\":\"db\",\"style\":\"dashed\"}]}",
		schema(nil, [2]string{"nodes", gpUpd}, [2]string{"edges", gpEdgeUpd})},
	{RemoveFromGraph, "Remove nodes (with their edges) and edges, by id or label, e.g. {\"nodes\":[\"cache\"],\"edges\":[\"api -> db\"]}",
		schema(nil, [2]string{"nodes", gpRefs}, [2]string{"edges", gpEdges})},
	{CreateSequence, "Draw a sequence diagram: actors side by side with lifelines, then the steps in order: messages (\"A -> B: label\", a reply \"B --> A: label\", or {from, to, label, return, activate, deactivate} for activation bars), " +
		"notes {note, over|left_of|right_of} and blocks {block: loop|alt|opt|par|critical|break, label, messages, else: [{label, messages}]}. Actors may be left out: they are taken from the steps. " +
		"E.g. {\"messages\":[\"Browser -> API: GET /cart\",{\"block\":\"alt\",\"label\":\"cached\",\"messages\":[\"API --> Browser: 200 OK\"]}]}",
		schema([]string{"messages"}, [2]string{"actors", `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"label":{"type":"string"}}}}`},
			[2]string{"messages", `{"type":"array","items":{"anyOf":[{"type":"string"},` + gpStep + `]}}`}, [2]string{"autonumber", `{"type":"boolean"}`})},
	{RelayoutGraph, "Lay the whole diagram out again from scratch (moves every node), optionally in another direction.",
		schema(nil, [2]string{"direction", gpDir})},
}
