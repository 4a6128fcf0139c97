package bot

import (
	"regexp"
	"strings"
)

var (
	// A ```mermaid (or ~~~mermaid) fence anywhere in the message.
	reMermaidFence = regexp.MustCompile("(?im)^[ \t]*(```|~~~)[ \t]*mermaid\\b")
	// A first line that is a diagram keyword, as Mermaid writes it (any case: the converter fixes
	// it), alone or with what may follow it there; plain sentences like "graph of sales" are not.
	reMermaidStart = regexp.MustCompile(`(?i)^(?:(?:flowchart|graph)(?:[ \t]+(?:TD|TB|BT|RL|LR))?|sequenceDiagram|classDiagram(?:-v2)?|stateDiagram(?:-v2)?|erDiagram|journey|gantt|pie(?:[ \t]+(?:showData|title[ \t].*))?|mindmap|timeline|gitGraph|quadrantChart|requirementDiagram|C4(?:Context|Container|Component|Dynamic|Deployment)|(?:sankey|xychart|block|packet|architecture|radar|treemap)-beta|kanban)[ \t]*;?$`)
)

// isMermaid reports whether a message is a Mermaid diagram: it holds a ```mermaid fence or a code
// block starting with a diagram keyword (Slack's "```flowchart TD"), or its first line (after %%
// comments and a --- front-matter block) is a diagram keyword and more follows.
func isMermaid(text string) bool {
	if reMermaidFence.MatchString(text) {
		return true
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, "```"); ok && reMermaidStart.MatchString(strings.TrimSpace(rest)) {
			return true
		}
	}
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	i := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i = 1; i < len(lines) && strings.TrimSpace(lines[i]) != "---"; i++ {
		}
		i++
	}
	for i < len(lines) && (strings.HasPrefix(strings.TrimSpace(lines[i]), "%%") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	return i < len(lines)-1 && reMermaidStart.MatchString(strings.TrimSpace(lines[i]))
}
