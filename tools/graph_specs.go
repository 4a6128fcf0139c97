package tools

// Schemas of the graph tools: flat items with enums, no coordinates anywhere, so a small model
// describes structure and the layout engine does the geometry. Every byte of a core tool's schema
// is sent with every request (agent.CoreTools, 9 KB budget), so add_to_graph names its items'
// fields without repeating create_graph's enums.
var (
	gpNode = `{"type":"object","properties":{"id":{"type":"string"},"label":{"type":"string"},"shape":{"type":"string","enum":["rectangle","ellipse","diamond"]},"color":{"type":"string"},"group":{"type":"string"}},"required":["id","label"]}`
	gpEdge = `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"label":{"type":"string"},"style":{"type":"string","enum":["solid","dashed","dotted"]},"arrow":{"type":"string","enum":["end","both","none"]}},"required":["from","to"]}`
	// add_to_graph names the items' fields only: create_graph, offered beside it, has their enums.
	gpNodeT = `{"type":"object","properties":{"id":{"type":"string"},"label":{"type":"string"},"shape":{"type":"string"},"color":{"type":"string"},"group":{"type":"string"}},"required":["id","label"]}`
	gpEdgeT = `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"label":{"type":"string"},"style":{"type":"string"}},"required":["from","to"]}`
	// Groups: style box (a light background box, nestable with parent) or frame (the default).
	gpGroups = `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"style":{"type":"string","enum":["frame","box"]},"parent":{"type":"string"}}}}`
	gpDir    = `{"type":"string","enum":["TB","LR","mindmap"]}`
	gpNodes  = `{"type":"array","items":` + gpNode + `}`
	gpEdges  = `{"type":"array","items":` + gpEdge + `}`
	gpUpd    = `{"type":"array","items":{"type":"object","properties":{"node":{"type":"string","description":"Id or label of the node."},"label":{"type":"string"},"shape":{"type":"string","enum":["rectangle","ellipse","diamond"]},"color":{"type":"string"},"group":{"type":"string","description":"Move into this group (\"\" to take it out)."}},"required":["node"]}}`
	gpRefs   = `{"type":"array","items":{"type":"string"},"description":"Node ids or labels."}`
	// A sequence step: a message, a note or a block (whose messages are steps again).
	gpStep = `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"label":{"type":"string"},"style":{"type":"string","enum":["solid","dashed"]},` +
		`"activate":{"type":"boolean"},"deactivate":{"type":"boolean"},"return":{"type":"boolean"},"note":{"type":"string"},"over":{"type":"string"},"left_of":{"type":"string"},"right_of":{"type":"string"},` +
		`"block":{"type":"string","enum":["loop","alt","opt","par","critical","break"]},"messages":{"type":"array","items":{"type":"object"}},"else":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"},"messages":{"type":"array","items":{"type":"object"}}}}}}}`
	gpPairs = `{"type":"array","items":{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},"required":["from","to"]}}`
)

var graphDocs = [...]toolDoc{
	{CreateGraph, "Draw a flowchart, architecture or other boxes-and-arrows diagram from nodes and edges; it places them. " +
		"E.g. {\"nodes\":[{\"id\":\"web\",\"label\":\"Web\",\"group\":\"Frontend\"},{\"id\":\"db\",\"label\":\"DB\",\"shape\":\"ellipse\"}],\"edges\":[{\"from\":\"web\",\"to\":\"db\",\"label\":\"SQL\"}]}",
		schema([]string{"nodes"}, [2]string{"direction", gpDir}, [2]string{"nodes", gpNodes}, [2]string{"edges", gpEdges}, [2]string{"groups", gpGroups})},
	{AddToGraph, "Add nodes and edges (fields as in create_graph; from/to: id or label) beside their neighbours. Other nodes stay put.",
		schema(nil, [2]string{"nodes", `{"type":"array","items":` + gpNodeT + `}`}, [2]string{"edges", `{"type":"array","items":` + gpEdgeT + `}`})},
	{UpdateGraph, "Change nodes (label, shape, color, group) and edges (label, style, arrow) found by id or label, e.g. {\"nodes\":[{\"node\":\"API\",\"color\":\"green\",\"group\":\"Backend\"}],\"edges\":[{\"from\":\"api\",\"to\":\"db\",\"style\":\"dashed\"}]}",
		schema(nil, [2]string{"nodes", gpUpd}, [2]string{"edges", gpEdges})},
	{RemoveFromGraph, "Remove nodes (with their edges) and edges, by id or label, e.g. {\"nodes\":[\"cache\"],\"edges\":[{\"from\":\"api\",\"to\":\"db\"}]}",
		schema(nil, [2]string{"nodes", gpRefs}, [2]string{"edges", gpPairs})},
	{CreateSequence, "Draw a sequence diagram: actors side by side with lifelines, then the steps in order: messages (activate/deactivate draw activation bars; return: a dashed reply), " +
		"notes {note, over|left_of|right_of} and blocks {block: loop|alt|opt|par|critical|break, label, messages, else: [{label, messages}]}. Actors may be left out: they are taken from the steps. " +
		"E.g. {\"messages\":[{\"from\":\"Browser\",\"to\":\"API\",\"label\":\"GET /cart\",\"activate\":true},{\"block\":\"alt\",\"label\":\"cached\",\"messages\":[{\"from\":\"API\",\"to\":\"Browser\",\"label\":\"200 OK\",\"return\":true,\"deactivate\":true}]}]}",
		schema([]string{"messages"}, [2]string{"actors", `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"label":{"type":"string"}}}}`},
			[2]string{"messages", `{"type":"array","items":` + gpStep + `}`}, [2]string{"autonumber", `{"type":"boolean"}`})},
	{RelayoutGraph, "Lay the whole diagram out again from scratch (moves every node), optionally in another direction.",
		schema(nil, [2]string{"direction", gpDir})},
}
