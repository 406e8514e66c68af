#include "app/workbench/graph_scopes.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace fusebox::workbench {

namespace {

bool all_digits(const std::string& s, size_t from, size_t to) {
  if (from >= to) return false;
  for (size_t i = from; i < to; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The scopes of one level (see default_folds): the top ones, a scope of every node replaced by
// its children.
std::vector<size_t> first_level(const ScopeTree& t) {
  const size_t all = t.node_scope.size();
  std::vector<size_t> level = t.top;
  for (bool again = true; again;) {
    again = false;
    std::vector<size_t> next;
    for (size_t s : level) {
      if (t.scopes[s].nodes == all && !t.scopes[s].children.empty()) {
        next.insert(next.end(), t.scopes[s].children.begin(), t.scopes[s].children.end());
        again = true;
      } else {
        next.push_back(s);
      }
    }
    level = std::move(next);
  }
  return level;
}

}  // namespace

std::vector<std::string> scope_chain(const std::string& name) {
  const char sep = name.find('/') != std::string::npos ? '/' : '.';
  std::vector<std::string> chain;
  for (size_t at = name.find(sep); at != std::string::npos; at = name.find(sep, at + 1)) {
    if (at == 0) continue;  // "/0/..." starts with a separator
    if (sep == '.') {
      // "layers.0.attn": the digits stay with "layers".
      const size_t next = name.find(sep, at + 1);
      if (next != std::string::npos && all_digits(name, at + 1, next)) continue;
    }
    if (name.find(sep, at + 1) == std::string::npos && at + 1 >= name.size()) break;
    chain.push_back(name.substr(0, at));
  }
  return chain;
}

std::optional<size_t> ScopeTree::find(const std::string& path) const {
  for (size_t i = 0; i < scopes.size(); ++i)
    if (scopes[i].path == path) return i;
  return std::nullopt;
}

std::vector<size_t> ScopeTree::chain_of(size_t node) const {
  std::vector<size_t> chain;
  for (int s = node < node_scope.size() ? node_scope[node] : -1; s >= 0; s = scopes[static_cast<size_t>(s)].parent)
    chain.push_back(static_cast<size_t>(s));
  std::reverse(chain.begin(), chain.end());
  return chain;
}

int ScopeTree::folded_scope_of(size_t node, const std::set<std::string>& folded) const {
  if (folded.empty()) return -1;
  for (size_t s : chain_of(node))
    if (scopes[s].nodes >= 2 && folded.count(scopes[s].path)) return static_cast<int>(s);
  return -1;
}

size_t ScopeTree::visible_boxes(const std::set<std::string>& folded) const {
  std::set<int> folds;
  size_t nodes = 0;
  for (size_t i = 0; i < node_scope.size(); ++i) {
    const int s = folded_scope_of(i, folded);
    if (s < 0) ++nodes;
    else folds.insert(s);
  }
  return nodes + folds.size();
}

ScopeTree build_scopes(const ir::Graph& g) {
  ScopeTree t;
  std::unordered_map<std::string, size_t> index;
  t.node_scope.assign(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int parent = -1;
    for (std::string& path : scope_chain(g.nodes[i].name)) {
      auto [it, added] = index.emplace(path, t.scopes.size());
      if (added) {
        Scope s;
        s.path = std::move(path);
        s.parent = parent;
        s.depth = parent < 0 ? 0 : t.scopes[static_cast<size_t>(parent)].depth + 1;
        t.scopes.push_back(std::move(s));
        if (parent < 0) t.top.push_back(it->second);
        else t.scopes[static_cast<size_t>(parent)].children.push_back(it->second);
      }
      ++t.scopes[it->second].nodes;
      parent = static_cast<int>(it->second);
    }
    t.node_scope[i] = parent;
  }
  return t;
}

std::set<std::string> default_folds(const ScopeTree& t) {
  if (t.node_scope.size() <= kFoldAboveNodes || t.scopes.empty()) return {};
  std::set<std::string> best;
  std::vector<size_t> level = first_level(t);
  for (bool first = true; !level.empty(); first = false) {
    std::set<std::string> folded;
    for (size_t s : level)
      if (t.scopes[s].nodes >= 2) folded.insert(t.scopes[s].path);
    if (folded.empty()) break;  // only single nodes left: deeper levels fold nothing
    if (!first && t.visible_boxes(folded) > kFoldTargetBoxes) break;
    best = std::move(folded);
    std::vector<size_t> next;
    for (size_t s : level) next.insert(next.end(), t.scopes[s].children.begin(), t.scopes[s].children.end());
    level = std::move(next);
  }
  return best;
}

std::vector<size_t> find_nodes(const ir::Graph& g, const std::string& query) {
  std::vector<size_t> found;
  if (query.empty()) return found;
  const std::string q = lower(query);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (lower(g.nodes[i].name).find(q) != std::string::npos || lower(g.nodes[i].op).find(q) != std::string::npos)
      found.push_back(i);
  return found;
}

}  // namespace fusebox::workbench
