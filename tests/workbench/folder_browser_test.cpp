// File > Open's folder model: one folder's subfolders and the files open= takes, moving between
// folders, typed paths, and folders that cannot be read named in the error.
#include "app/workbench/folder_browser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace fusebox::workbench {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> names(const FolderListing& l) {
  std::vector<std::string> out;
  for (const auto& e : l.entries) out.push_back(e.folder ? e.name + "/" : e.name);
  return out;
}

fs::path make_tree() {
  const fs::path d = fs::path(fusebox::test::process_temp_dir()) / "tree";
  fs::remove_all(d);
  for (const char* sub : {"zeta", "alpha", ".hidden"}) fs::create_directories(d / sub);
  for (const char* f : {"b.onnx", "a.json", "t.json.gz", "r.sqlite", "notes.txt", "x.schema.json",
                        ".secret.onnx", "model.onnx.bak"})
    std::ofstream(d / f) << "x";
  std::ofstream(d / "alpha" / "inner.onnx") << "x";
  return d;
}

TEST(FolderBrowser, ListsSubfoldersThenOpenableFilesByName) {
  const fs::path d = make_tree();
  const FolderListing l = list_folder(d.string());
  EXPECT_EQ(l.error, "");
  EXPECT_EQ(l.folder, d.string());
  EXPECT_EQ(names(l), (std::vector<std::string>{"alpha/", "zeta/", "a.json", "b.onnx", "r.sqlite",
                                                "t.json.gz"}));
  EXPECT_EQ(l.entries[3].kind, "model");
  EXPECT_EQ(l.entries[3].path, (d / "b.onnx").string());
  EXPECT_EQ(openable_kind("t.json.gz"), "trace (PyTorch profiler)");
  EXPECT_FALSE(is_openable_file("scenario.schema.json"));
}

TEST(FolderBrowser, MovesIntoAndUpAndFollowsTypedPaths) {
  const fs::path d = make_tree();
  FolderBrowser b(d.string());
  b.enter("alpha");
  EXPECT_EQ(b.folder(), (d / "alpha").string());
  EXPECT_EQ(names(b.listing()), (std::vector<std::string>{"inner.onnx"}));
  b.up();
  EXPECT_EQ(b.folder(), d.string());
  // A typed folder is entered; a typed file comes back to be opened; relative to the folder.
  EXPECT_EQ(b.go("zeta/").open, "");
  EXPECT_EQ(b.folder(), (d / "zeta").string());
  const FolderBrowser::Go file = b.go("../alpha/inner.onnx");
  EXPECT_EQ(file.open, (d / "alpha" / "inner.onnx").string());
  EXPECT_EQ(file.error, "");
  EXPECT_EQ(b.go((d / "b.onnx").string()).open, (d / "b.onnx").string());
  const FolderBrowser::Go missing = b.go("nope.onnx");
  EXPECT_EQ(missing.open, "");
  EXPECT_EQ(missing.error, "no such file or folder: '" + (d / "zeta" / "nope.onnx").string() + "'");
  // The root's parent is the root.
  FolderBrowser root("/");
  root.up();
  EXPECT_EQ(root.folder(), "/");
}

TEST(FolderBrowser, AFolderThatCannotBeReadIsNamedAndUpStillWorks) {
  const fs::path d = make_tree();
  FolderBrowser b(d.string());
  b.cd("gone");
  EXPECT_EQ(b.folder(), (d / "gone").string());
  EXPECT_EQ(b.listing().error, "cannot read folder '" + (d / "gone").string() + "': no such folder");
  EXPECT_TRUE(b.listing().entries.empty());
  b.up();
  EXPECT_EQ(b.listing().error, "");
  EXPECT_EQ(b.folder(), d.string());
  EXPECT_EQ(list_folder((d / "b.onnx").string()).error,
            "cannot read folder '" + (d / "b.onnx").string() + "': not a folder");
  // Without permission (as root, permissions do not stop a read: nothing to check then).
  fs::create_directories(d / "locked");
  fs::permissions(d / "locked", fs::perms::none);
  const FolderListing locked = list_folder((d / "locked").string());
  if (!locked.error.empty()) {
    EXPECT_EQ(locked.error, "cannot read folder '" + (d / "locked").string() + "': Permission denied");
  }
  fs::permissions(d / "locked", fs::perms::owner_all);
}

}  // namespace
}  // namespace fusebox::workbench
