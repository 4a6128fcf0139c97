#!/usr/bin/env bash
# Converts the typed plan's schema (agent/plan/testdata/schema.golden.json, which
# `go test ./agent/plan` keeps equal to plan.Schema()) with Ollama's own converter: llama.cpp's
# json-schema-to-grammar, from the github.com/ollama/ollama version in go.mod, the code Ollama
# runs on a request's format. It fails when the converter refuses the schema or warns that the
# conversion was incomplete, and prints the grammar.
#
#   scripts/plan-grammar.sh                 # the plan schema
#   scripts/plan-grammar.sh other.json      # any schema
#
# Needs g++ (C++17) and nlohmann/json's headers (Debian/Ubuntu: apt-get install
# nlohmann-json3-dev): the Go module of Ollama leaves llama.cpp's vendored copy out, so its cgo
# package cannot be built from the module cache, and only the converter is compiled here.
set -euo pipefail
cd "$(dirname "$0")/.."

schema="${1:-agent/plan/testdata/schema.golden.json}"
version=$(go list -m -f '{{.Version}}' github.com/ollama/ollama)
src="$(go env GOMODCACHE)/github.com/ollama/ollama@${version}/llama/llama.cpp/common"
go mod download github.com/ollama/ollama
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp "$src/json-schema-to-grammar.cpp" "$src/json-schema-to-grammar.h" "$work/"
# The three helpers the converter takes from llama.cpp's common.h (copied from common.cpp).
cat >"$work/common.h" <<'CPP'
#pragma once
#include <sstream>
#include <string>
#include <vector>
inline std::string string_join(const std::vector<std::string> & v, const std::string & sep) {
    std::ostringstream r;
    for (size_t i = 0; i < v.size(); ++i) { if (i > 0) { r << sep; } r << v[i]; }
    return r.str();
}
inline std::vector<std::string> string_split(const std::string & s, const std::string & d) {
    std::vector<std::string> parts;
    size_t start = 0, end = s.find(d);
    while (end != std::string::npos) { parts.push_back(s.substr(start, end - start)); start = end + d.length(); end = s.find(d, start); }
    parts.push_back(s.substr(start));
    return parts;
}
inline std::string string_repeat(const std::string & s, size_t n) {
    std::string r;
    for (size_t i = 0; i < n; ++i) { r += s; }
    return r;
}
CPP
# What Ollama's schema_to_grammar (llama/sampling_ext.cpp) does: parse as ordered JSON, convert.
cat >"$work/main.cpp" <<'CPP'
#include "json-schema-to-grammar.h"
#include <nlohmann/json.hpp>
#include <iostream>
#include <iterator>
int main() {
    std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    try {
        std::cout << json_schema_to_grammar(nlohmann::ordered_json::parse(in));
    } catch (const std::exception & e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
CPP
g++ -std=c++17 -O1 -o "$work/convert" "$work/main.cpp" "$work/json-schema-to-grammar.cpp"
"$work/convert" <"$schema" >"$work/grammar" 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
if [ -s "$work/stderr" ]; then
	cat "$work/stderr" >&2
	exit 1
fi
cat "$work/grammar"
echo "ollama ${version}: the converter took ${schema} ($(wc -l <"$work/grammar") grammar rules)" >&2
