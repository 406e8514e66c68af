#pragma once
// What File > Open browses: one folder's subfolders and the files `open=` takes, and moving
// between folders (into one, up, or to a typed path). No ImGui here; app/ui/open_dialog draws it.
//
//   FolderBrowser b(".");
//   for (const FolderEntry& e : b.listing().entries) ...   // folders first, then files, by name
//   b.enter("assets"); b.up();
//   FolderBrowser::Go go = b.go("models/mlp_opset17.onnx");  // a file: go.open is its path
//
// A folder that cannot be read is still the current folder, with no entries and `error` naming
// it and the reason, so the dialog says which folder failed and Up still works.
#include <string>
#include <vector>

namespace fusebox::workbench {

// Whether `name` is a file open= takes: a model (.onnx), a scenario or a PyTorch profiler trace
// (.json), a gzipped trace (.json.gz) or an nsys SQLite export (.sqlite). JSON Schemas
// (*.schema.json) are none of these and are left out.
bool is_openable_file(const std::string& name);
// "model", "scenario or trace", "trace": what an openable file is, by its name ("" when not one).
std::string openable_kind(const std::string& name);

struct FolderEntry {
  std::string name;  // "models", "mlp_opset17.onnx"
  std::string path;  // the folder's path joined with the name
  bool folder = false;
  std::string kind;  // a file's openable_kind; "" for a folder
};

struct FolderListing {
  std::string folder;  // absolute, normalised
  std::vector<FolderEntry> entries;  // subfolders, then openable files; hidden ones left out
  std::string error;   // "cannot read folder '/x': Permission denied"; "" when read
};

// Lists `folder` (made absolute against the working directory). Never throws.
FolderListing list_folder(const std::string& folder);

class FolderBrowser {
 public:
  explicit FolderBrowser(const std::string& folder = ".");

  const FolderListing& listing() const { return listing_; }
  const std::string& folder() const { return listing_.folder; }

  // Moves to `folder` (relative to the current one, or absolute) and lists it.
  void cd(const std::string& folder);
  void enter(const std::string& name) { cd(name); }
  void up();  // the parent folder; the root stays the root
  void refresh() { cd(listing_.folder); }

  // A typed path, relative to the current folder or absolute: a folder is entered (open stays
  // empty); a file comes back in `open` to be opened; anything missing comes back in `error`
  // naming it.
  struct Go {
    std::string open;
    std::string error;
  };
  Go go(const std::string& typed);

 private:
  std::string resolve(const std::string& path) const;
  FolderListing listing_;
};

}  // namespace fusebox::workbench
