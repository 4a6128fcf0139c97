package tools

// The tools' names, the one place they are spelled: the dispatch table, the specs and the agent
// (its core set, its plan expansion) all use these, so a renamed tool cannot leave a caller behind.
const (
	ReadDiagramGuide    = "read_diagram_guide"
	GetScene            = "get_scene"
	GetElement          = "get_element"
	QueryElements       = "query_elements"
	CreateGraph         = "create_graph"
	AddToGraph          = "add_to_graph"
	UpdateGraph         = "update_graph"
	RemoveFromGraph     = "remove_from_graph"
	RelayoutGraph       = "relayout_graph"
	CreateSequence      = "create_sequence"
	CreateFromMermaid   = "create_from_mermaid"
	BatchCreateElements = "batch_create_elements"
	CreateElement       = "create_element"
	UpdateElement       = "update_element"
	DeleteElements      = "delete_elements"
	GroupElements       = "group_elements"
	UngroupElements     = "ungroup_elements"
	AlignElements       = "align_elements"
	DistributeElements  = "distribute_elements"
	LockElements        = "lock_elements"
	UnlockElements      = "unlock_elements"
	SetViewport         = "set_viewport"
	SnapshotScene       = "snapshot_scene"
	RestoreSnapshot     = "restore_snapshot"
	ClearCanvas         = "clear_canvas"
	Done                = "done"
)
