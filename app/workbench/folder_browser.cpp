#include "app/workbench/folder_browser.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace fusebox::workbench {

namespace fs = std::filesystem;

std::string openable_kind(const std::string& name) {
  if (name.ends_with(".schema.json")) return "";
  if (name.ends_with(".onnx")) return "model";
  if (name.ends_with(".json")) return "scenario or trace";
  if (name.ends_with(".json.gz")) return "trace (PyTorch profiler)";
  if (name.ends_with(".sqlite")) return "trace (nsys export)";
  return "";
}

bool is_openable_file(const std::string& name) { return !openable_kind(name).empty(); }

FolderListing list_folder(const std::string& folder) {
  FolderListing out;
  std::error_code ec;
  fs::path dir = fs::absolute(folder.empty() ? fs::path(".") : fs::path(folder), ec);
  if (ec) dir = folder;
  dir = dir.lexically_normal();
  // "/a/b/" -> "/a/b": one spelling per folder (the root keeps its slash).
  if (dir.has_relative_path() && !dir.has_filename()) dir = dir.parent_path();
  out.folder = dir.string();
  if (!fs::exists(dir, ec)) {
    out.error = "cannot read folder '" + out.folder + "': no such folder";
    return out;
  }
  if (!fs::is_directory(dir, ec)) {
    out.error = "cannot read folder '" + out.folder + "': not a folder";
    return out;
  }
  fs::directory_iterator it(dir, ec), end;
  if (ec) {
    out.error = "cannot read folder '" + out.folder + "': " + ec.message();
    return out;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      out.error = "stopped reading folder '" + out.folder + "': " + ec.message();
      break;
    }
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code kind_ec;
    if (it->is_directory(kind_ec)) {  // a link to a folder counts as one
      out.entries.push_back({name, (dir / name).string(), true, ""});
    } else if (it->is_regular_file(kind_ec) && is_openable_file(name)) {
      out.entries.push_back({name, (dir / name).string(), false, openable_kind(name)});
    }
  }
  std::sort(out.entries.begin(), out.entries.end(), [](const FolderEntry& a, const FolderEntry& b) {
    if (a.folder != b.folder) return a.folder;
    return a.name < b.name;
  });
  return out;
}

FolderBrowser::FolderBrowser(const std::string& folder) : listing_(list_folder(folder)) {}

std::string FolderBrowser::resolve(const std::string& path) const {
  const fs::path p(path);
  return (p.is_absolute() ? p : fs::path(listing_.folder) / p).lexically_normal().string();
}

void FolderBrowser::cd(const std::string& folder) { listing_ = list_folder(resolve(folder)); }

void FolderBrowser::up() {
  const fs::path here(listing_.folder);
  cd(here.has_parent_path() ? here.parent_path().string() : here.string());
}

FolderBrowser::Go FolderBrowser::go(const std::string& typed) {
  if (typed.empty()) return {};
  const std::string path = resolve(typed);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) {
    cd(path);
    return {};
  }
  if (!fs::exists(st)) return {"", "no such file or folder: '" + path + "'"};
  return {path, ""};
}

}  // namespace fusebox::workbench
