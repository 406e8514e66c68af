#pragma once
// Name scopes of a graph's nodes, for folding a big graph into one box per layer or module, and
// node search. No ImGui here: the graph panel keeps which scopes are folded, layout_graph draws
// each folded scope as one box (LayoutOptions::folded).
//
// A scope is a prefix of node names, cut at a separator: '/' when the name has one (what
// torch.onnx.export writes: "/0/self_attn/MatMul" is in "/0" and "/0/self_attn"), else '.'
// (our builders and many exporters: "layer0.attn.q_proj.MatMul" is in "layer0", "layer0.attn"
// and "layer0.attn.q_proj"). A piece of digits only stays with the piece before it after a
// '.', so "layers.0.attn.MatMul" is in "layers.0" and "layers.0.attn", not "layers". The last
// piece is the node itself, never a scope.
//
//   ScopeTree t = build_scopes(g);
//   std::set<std::string> folded = default_folds(t);   // {"layer0", "layer1", ...} past 200 nodes
//   visible_boxes(t, folded);                          // 18 boxes instead of 1,008
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox::workbench {

// The scopes of a node name, outermost first, each a prefix of the name: "layer0.attn.MatMul" ->
// {"layer0", "layer0.attn"}; "MatMul_3" -> {}.
std::vector<std::string> scope_chain(const std::string& node_name);

struct Scope {
  std::string path;         // "layer0.attn": a prefix of each of its nodes' names
  int parent = -1;          // index in ScopeTree::scopes; -1 at the top
  size_t depth = 0;         // 0 at the top
  size_t nodes = 0;         // nodes in it and in every scope inside it
  std::vector<size_t> children;
};

struct ScopeTree {
  std::vector<Scope> scopes;     // a parent before its children
  std::vector<int> node_scope;   // the innermost scope of each node of the graph; -1 for none
  std::vector<size_t> top;       // scopes with no parent

  std::optional<size_t> find(const std::string& path) const;
  // The outermost scope in `folded` holding node `node` (folding a scope hides those inside
  // it), or -1. A scope of fewer than two nodes never folds.
  int folded_scope_of(size_t node, const std::set<std::string>& folded) const;
  // Scopes holding node `node`, outermost first (indices).
  std::vector<size_t> chain_of(size_t node) const;
  // Boxes the nodes take with `folded` folded: one per visible node, one per folded scope.
  size_t visible_boxes(const std::set<std::string>& folded) const;
};

ScopeTree build_scopes(const ir::Graph& g);

// Graphs of more nodes than this are folded by default (default_folds).
inline constexpr size_t kFoldAboveNodes = 200;
// Default folding aims at no more boxes than this.
inline constexpr size_t kFoldTargetBoxes = 64;

// The folds a graph starts with. Up to kFoldAboveNodes nodes: none. Beyond, the scopes of one
// level are folded: level 1 is the top scopes (a scope holding every node of the graph stands
// for its children), each next level the children of the one before. The deepest level that
// leaves at most kFoldTargetBoxes boxes wins; when none does, level 1 (the fewest boxes). A
// graph whose names carry no scopes folds nothing.
std::set<std::string> default_folds(const ScopeTree& tree);

// Nodes whose name or op contains `query`, ignoring case, in graph order. Empty for an empty
// query.
std::vector<size_t> find_nodes(const ir::Graph& g, const std::string& query);

}  // namespace fusebox::workbench
