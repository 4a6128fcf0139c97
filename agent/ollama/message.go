package ollama

import "encoding/json"

// Roles of a Message, as Ollama names them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of a conversation with the model.
type Message struct {
	Role    string
	Content string
	// ToolCalls are the calls an assistant message asks for, in the order they must run.
	ToolCalls []ToolCall
	// ToolCallID and ToolName tie a tool message to the call it answers.
	ToolCallID string
	ToolName   string
	// Images are the pictures a user message carries (PNG or JPEG bytes).
	Images [][]byte
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID   string
	Name string
	// Args is the JSON object of arguments. When the model sent something that is not a JSON
	// object, Args is nil and ArgsErr says what was wrong; the call is still answered.
	Args    json.RawMessage
	ArgsErr string
	// At is how much of the reply's Content had arrived when the call did (a byte offset), so that
	// calls the model also wrote into the text run in the order it wrote them.
	At int
}

// Reply is the model's answer to one request.
type Reply struct {
	Message Message
	// PromptTokens and OutputTokens are the model's own counts (0 when it reports none).
	PromptTokens int
	OutputTokens int
}
