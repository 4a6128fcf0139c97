package layout

// GroupedGraph is groupedGraph for the benchmarks of package layout_test, which compare other
// engines (layout/elk) on the same graph.
var GroupedGraph = groupedGraph
