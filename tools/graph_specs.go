package tools

// Schemas of the graph tools: flat items with enums, no coordinates anywhere, so a small model
// describes structure and the layout engine does the geometry.
var (
	gpNode   = `{"type":"object","properties":{"id":{"type":"string","description":"Short id, e.g. \"api\"."},"label":{"type":"string"},"shape":{"type":"string","enum":["rectangle","ellipse","diamond"]},"color":{"type":"string","description":"Fill: \"blue\", \"green\", \"yellow\", \"red\", \"gray\"…"},"group":{"type":"string","description":"Group title; nodes with the same group are boxed together."}},"required":["id","label"]}`
	gpEdge   = `{"type":"object","properties":{"from":{"type":"string","description":"Node id or label."},"to":{"type":"string"},"label":{"type":"string"},"style":{"type":"string","enum":["solid","dashed","dotted"]},"arrow":{"type":"string","enum":["end","both","none"]}},"required":["from","to"]}`
	gpDir    = `{"type":"string","enum":["TB","LR"],"description":"TB top-down (default), LR left-right."}`
	gpNodes  = `{"type":"array","items":` + gpNode + `}`
	gpEdges  = `{"type":"array","items":` + gpEdge + `}`
	gpGroups = `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"}}},"description":"Optional: groups with a title different from their id."}`
	gpUpd    = `{"type":"array","items":{"type":"object","properties":{"node":{"type":"string","description":"Id or label of the node."},"label":{"type":"string"},"color":{"type":"string"},"group":{"type":"string","description":"Move into this group (\"\" to take it out)."}},"required":["node"]}}`
	gpRefs   = `{"type":"array","items":{"type":"string"},"description":"Node ids or labels."}`
	gpPairs  = `{"type":"array","items":{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},"required":["from","to"]}}`
)

var graphDocs = [...]toolDoc{
	{"create_graph", "Best way to draw a flowchart, architecture or any boxes-and-arrows diagram: give nodes and edges, no coordinates; it sizes, places and connects them. " +
		"Example: {\"direction\":\"TB\",\"nodes\":[{\"id\":\"web\",\"label\":\"Web app\",\"group\":\"Frontend\"},{\"id\":\"db\",\"label\":\"Database\",\"shape\":\"ellipse\"}],\"edges\":[{\"from\":\"web\",\"to\":\"db\",\"label\":\"SQL\"}]}",
		schema([]string{"nodes"}, [2]string{"direction", gpDir}, [2]string{"nodes", gpNodes}, [2]string{"edges", gpEdges}, [2]string{"groups", gpGroups})},
	{"add_to_graph", "Add nodes and edges to the diagram; existing nodes stay where they are, new ones go next to their neighbours. Refer to nodes by id or label. " +
		"E.g. {\"nodes\":[{\"id\":\"cache\",\"label\":\"Cache\"}],\"edges\":[{\"from\":\"api\",\"to\":\"cache\"}]}",
		schema(nil, [2]string{"nodes", gpNodes}, [2]string{"edges", gpEdges})},
	{"update_graph", "Change nodes (label, color, group) and edges (label, style, arrow) found by id or label, e.g. {\"nodes\":[{\"node\":\"API\",\"color\":\"green\",\"group\":\"Backend\"}],\"edges\":[{\"from\":\"api\",\"to\":\"db\",\"style\":\"dashed\"}]}",
		schema(nil, [2]string{"nodes", gpUpd}, [2]string{"edges", gpEdges})},
	{"remove_from_graph", "Remove nodes (with their edges) and edges, by id or label, e.g. {\"nodes\":[\"cache\"],\"edges\":[{\"from\":\"api\",\"to\":\"db\"}]}",
		schema(nil, [2]string{"nodes", gpRefs}, [2]string{"edges", gpPairs})},
	{"relayout_graph", "Lay the whole diagram out again from scratch (moves every node), optionally in another direction.",
		schema(nil, [2]string{"direction", gpDir})},
}
