package tools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// A model's calls, made by hand: two labelled shapes, an arrow between them, and the scene text
// the model reads back.
func Example() {
	set := tools.New(scene.New(), tools.DefaultLimits())
	ctx := context.Background()
	res := set.Call(ctx, "batch_create_elements", json.RawMessage(`{"elements":[
		{"id":"api","type":"rectangle","x":0,"y":0,"text":"API","backgroundColor":"blue"},
		{"id":"db","type":"ellipse","x":0,"y":200,"text":"Postgres"},
		{"id":"q1","type":"arrow","startElementId":"api","endElementId":"db","text":"SQL"}]}`))
	fmt.Println(res.Text)
	fmt.Print(set.Call(ctx, "get_scene", nil).Text)
	res = set.Call(ctx, "update_element", json.RawMessage(`{"id":"dB","backgroundColor":"cerulean"}`))
	fmt.Println(res.IsError)
	fmt.Println(res.Text)
	// Output:
	// created 3: api, db, q1. The canvas has 6 elements (limit 500).
	// scene: 6 elements (limit 500), bbox 0,0 160x270
	// api rect 0,0 160x80 "API" bg=blue
	// db ellipse 0,200 140x70 "Postgres"
	// connections:
	// api -> db "SQL" (q1)
	// true
	// update_element refused, nothing changed:
	// - backgroundColor: unknown colour "cerulean"; use a hex code like "#1971c2" or one of: transparent, black, white, red, pink, grape, violet, blue, cyan, teal, green, yellow, orange, bronze, gray (each also as -lightest, -light, -medium, -strong, -dark, e.g. "blue-light")
	// - id: no element with id "dB"; closest ids: "db"
}
