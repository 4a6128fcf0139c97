module github.com/ollama/ollama

go 1.24.1

require (
	github.com/google/uuid v1.6.0
	github.com/wk8/go-ordered-map/v2 v2.1.8
	golang.org/x/crypto v0.43.0
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.1 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	golang.org/x/sys v0.37.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
