package textcall

import (
	"regexp"
	"strings"
)

// What a model writes besides its calls is shown to people (the run's summary). Chat templates
// leak their control tokens into it (<|im_end|>, <|eot_id|>, <end_of_turn>, [TOOL_CALLS], DeepSeek's
// full-width markers, Granite's <no_tool_call>), and a call taken out of its wrapper leaves the
// wrapper behind. Visible removes all of that and keeps the words.

var (
	// Seed-OSS thinks in <seed:think>, with <seed:cot_budget_reflect> notes inside.
	thinkBlock = regexp.MustCompile(`(?s)<(?:seed:)?(?:think|thinking|reasoning)>.*?(?:</(?:seed:)?(?:think|thinking|reasoning)>|$)|\[THINK\].*?(?:\[/THINK\]|$)`)
	// A closing tag with no opening one: templates that open the thinking block in the prompt
	// (Cohere's Command A ends it with <|END_THINKING|>).
	thinkTail  = regexp.MustCompile(`(?s)^.*?(?:</(?:seed:)?(?:think|thinking|reasoning)>|\[/THINK\]|<\|END_THINKING\|>)`)
	controlTok = regexp.MustCompile(`<\|[^|<>\s]{1,48}\|>|<｜[^｜<>]{1,48}｜>|\[/?(?:INST|TOOL_CALLS|ARGS|CALL_ID|TOOL_RESULTS|AVAILABLE_TOOLS)\]|</?(?:no_tool_call|end_of_turn|start_of_turn|eos|bos|s|start_function_call|end_function_call|escape)>`)
	// Wrappers may carry a namespace (<minimax:tool_call>, <seed:tool_call>) or DeepSeek's DSML
	// marker (<｜DSML｜function_calls>, also written with doubled bars or spaces).
	wrapperTag = regexp.MustCompile(`(?i)</?(?:[a-z]+:|[|｜]+\s*DSML\s*[|｜]+\s*)?(?:tool_?calls?|tools?|function_calls?|calls|function|response|tool_code|tool_response|arg_key|arg_value|parameter)(?:=[^>\s]*)?>`)
	emptyFence = regexp.MustCompile("```\\s*[A-Za-z0-9_\\-]*\\s*```")
	turnRole   = regexp.MustCompile(`(?m)^(?:model|assistant)\s*$`)
	// A call's header line left once its call is taken out ("Action:", GigaChat's "function call" role).
	actionLine  = regexp.MustCompile(`(?im)^\s*(?:Action|Tool call|Function call)s?\s*:?\s*$`)
	blankLines  = regexp.MustCompile(`\n{3,}`)
	punctuation = regexp.MustCompile(`(?m)^[\s\[\](){},;]+$`)
	// What a list of calls leaves once its calls are taken out: [], [,], [ , ].
	emptyList = regexp.MustCompile(`\[[\s,;]*\]`)
	// An element left empty once the call inside it is taken out: <command> </command>.
	emptyElement = regexp.MustCompile(`<([A-Za-z_][\w\-]*)>\s*</([A-Za-z_][\w\-]*)>`)
)

// StripThinking drops thinking blocks that some models write into content even with think off.
func StripThinking(s string) string {
	if !strings.Contains(s, "think") && !strings.Contains(s, "THINK") && !strings.Contains(s, "reasoning>") {
		return s
	}
	s = thinkBlock.ReplaceAllString(s, "")
	s = thinkTail.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}

// Visible is s as a person should read it: no thinking, control tokens, empty wrappers or
// fences, and no lines of leftover punctuation.
func Visible(s string) string {
	s = StripThinking(s)
	if strings.ContainsAny(s, "<[`") {
		s = controlTok.ReplaceAllString(s, "")
		s = wrapperTag.ReplaceAllString(s, "")
		s = emptyList.ReplaceAllString(s, "")
		for range 3 { // nested empty elements, innermost first
			s = emptyElement.ReplaceAllStringFunc(s, func(e string) string {
				if m := emptyElement.FindStringSubmatch(e); m[1] == m[2] {
					return ""
				}
				return e
			})
		}
		s = emptyFence.ReplaceAllString(s, "")
	}
	s = turnRole.ReplaceAllString(s, "")
	s = actionLine.ReplaceAllString(s, "")
	s = punctuation.ReplaceAllString(s, "")
	s = blankLines.ReplaceAllString(strings.TrimSpace(s), "\n\n")
	return strings.TrimSpace(s)
}

// callSign matches what only an attempted tool call writes.
// <|python_tag|> counts only before what a call looks like (a JSON value or name(…)): Llama 3.1
// also puts code for its ipython environment there, which is an answer, not a broken call.
var callSign = regexp.MustCompile(`(?i)<tool_calls?>|<function[=_]|\[TOOL_CALLS\]|<\|python_tag\|>\s*(?:[{\[]|[A-Za-z_][\w.]*\()|functools\[|<\|tool_call|tool▁call|invoke\s+name\s*=|"(?:name|function|tool_name)"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|parameters|args)"`)

// LooksLikeCall reports whether text, which yielded no call, still looks like an attempt at one:
// a call wrapper, a name-and-arguments object, or a tool's name followed by its arguments.
func LooksLikeCall(text string, known Types) bool {
	if callSign.MatchString(text) {
		return true
	}
	for name := range known {
		for i := 0; ; {
			j := strings.Index(text[i:], name)
			if j < 0 {
				break
			}
			after := strings.TrimLeft(text[i+j+len(name):], " \"'`:")
			if strings.HasPrefix(after, "(") || strings.HasPrefix(after, "{") {
				return true
			}
			i += j + len(name)
		}
	}
	return false
}
