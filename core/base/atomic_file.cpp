#include "core/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "core/base/error.h"
#include "core/base/temporaries.h"

namespace fusebox {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// "a/b/" -> "a/b" (a trailing slash would make rename() treat the name differently).
std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// What `path` names after following symbolic links: lstat()'s answer when it is not a link.
// Returns false when nothing is there.
bool resolve(const std::string& path, const std::string& named, std::string& resolved,
             struct stat& st) {
  resolved = path;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    throw Error("cannot write '" + named + "': " + errno_text(errno));
  }
  if (!S_ISLNK(st.st_mode)) return true;
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr)
    throw Error("cannot write '" + named + "': a symbolic link to nothing (" + errno_text(errno) +
                ")");
  resolved = real;
  std::free(real);
  if (::stat(resolved.c_str(), &st) != 0)
    throw Error("cannot write '" + named + "': " + errno_text(errno));
  return true;
}

// Creates a new, unused name "<folder>/.fusebox-XXXXXX" with create(name) (open with O_EXCL, or
// mkdir), which returns false with errno set when it cannot. A short name, so that the target's
// own name can be as long as the file system allows. Permissions come from create and the umask.
std::string create_unique(const std::string& folder, const std::string& named,
                          const std::function<bool(const std::string&)>& create) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = folder + "/.fusebox-";
    for (int i = 0; i < 6; ++i) name += kChars[rd() % (sizeof kChars - 1)];
    if (create(name)) return name;
    if (errno != EEXIST) break;
  }
  throw Error("cannot write '" + named + "': " + errno_text(errno) +
              " (creating a temporary name in '" + folder + "')");
}

// The regular file a write to `path` replaces (`path`, or what a link there names), or `path`
// when nothing is there; `mode` gets the replaced file's permissions (0 for a new file).
std::string file_to_replace(const std::string& path, mode_t& mode) {
  std::string target;
  struct stat st {};
  mode = 0;
  if (!resolve(path, path, target, st)) return path;
  if (!S_ISREG(st.st_mode))
    throw Error("cannot write '" + path + "': it is " + kind_of(st.st_mode) +
                ", not a regular file; refusing to replace it");
  mode = st.st_mode & 07777;
  return target;
}

struct TempFile {
  std::string path;
  int fd = -1;
  Temporary registered;  // removed should SIGINT or SIGTERM end the program first
  void discard() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    std::remove(path.c_str());
    registered.release();
  }
};

void commit(TempFile& tmp, const std::string& target, const std::string& named) {
  if (::fsync(tmp.fd) != 0) {
    const int err = errno;
    tmp.discard();
    throw Error("cannot write '" + named + "': " + errno_text(err));
  }
  ::close(tmp.fd);
  tmp.fd = -1;
  if (std::rename(tmp.path.c_str(), target.c_str()) != 0) {
    const int err = errno;
    tmp.discard();
    throw Error("cannot replace '" + named + "': " + errno_text(err));
  }
  tmp.registered.release();
}

// write(tmp) fills a temporary file that then replaces `path`. A fusebox::Error from write is
// rethrown naming `path` first when `name_target` (its message may name only the temporary file).
void replace_file(const std::string& path, const std::function<void(const std::string&)>& write,
                  bool name_target) {
  mode_t mode = 0;
  const std::string target = file_to_replace(path, mode);
  TempFile tmp;
  tmp.path = create_unique(parent_of(target), path, [&](const std::string& name) {
    tmp.fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    return tmp.fd >= 0;
  });
  tmp.registered.hold(tmp.path, false);
  if (mode != 0) ::fchmod(tmp.fd, mode);  // keep the replaced file's permissions
  try {
    write(tmp.path);
  } catch (const Error& e) {
    tmp.discard();
    if (!name_target) throw;
    throw Error("cannot write '" + path + "': " + e.what());
  } catch (...) {
    tmp.discard();
    throw;
  }
  commit(tmp, target, path);
}

// Removes a temporary folder and what is in it; what cannot be removed stays (nothing to report:
// the write already succeeded or failed for its own reason).
void remove_tree(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

// The folder a set of files replaces: `dir` (or the folder a link there names), checked to hold
// nothing but files `replaceable` calls ours; `dir` itself when nothing is there.
std::string dir_to_replace(const std::string& dir,
                           const std::function<bool(const std::string&)>& replaceable,
                           bool& exists) {
  std::string target;
  struct stat st {};
  exists = resolve(without_trailing_slashes(dir), dir, target, st);
  if (!exists) return target;
  if (!S_ISDIR(st.st_mode))
    throw Error("cannot write '" + dir + "': it is " + kind_of(st.st_mode) + ", not a directory");
  char* real = ::realpath(target.c_str(), nullptr);  // "." or "a/.." as a name rename() takes
  if (real == nullptr) throw Error("cannot write '" + dir + "': " + errno_text(errno));
  target = real;
  std::free(real);
  if (target == "/") throw Error("cannot write '" + dir + "': refusing to replace the root folder");
  std::error_code ec;
  for (std::filesystem::directory_iterator it(target, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->symlink_status(ec).type() != std::filesystem::file_type::regular || !replaceable(name))
      throw Error("cannot write '" + dir + "': it holds '" + name +
                  "', which is not one of the files written there; refusing to replace the folder "
                  "(give a new or empty one)");
  }
  if (ec) throw Error("cannot write '" + dir + "': " + ec.message());
  return target;
}

// Puts the filled folder `tmp` in the place of `target`: a rename when nothing is there, else an
// exchange of the two (renameat2), or where the file system has none, `target` renamed aside
// first and back again should the second rename fail. What was there is removed.
void swap_in(const std::string& tmp, const std::string& target, bool exists,
             const std::string& named) {
  auto fail = [&](int err) {
    remove_tree(tmp);
    throw Error("cannot replace '" + named + "': " + errno_text(err));
  };
  if (!exists) {
    if (std::rename(tmp.c_str(), target.c_str()) != 0) fail(errno);
    return;
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    remove_tree(tmp);  // now the old files
    return;
  }
  if (errno != EINVAL && errno != ENOSYS) fail(errno);
  const std::string aside = create_unique(parent_of(target), named, [](const std::string& name) {
    return ::mkdir(name.c_str(), 0700) == 0;  // an empty folder rename() may replace
  });
  if (std::rename(target.c_str(), aside.c_str()) != 0) {
    const int err = errno;
    ::rmdir(aside.c_str());
    fail(err);
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    std::rename(aside.c_str(), target.c_str());
    fail(err);
  }
  remove_tree(aside);
}

}  // namespace

namespace {

// A set of files write_directory_atomically is writing, unnamed until the set is whole, so that
// not even SIGKILL leaves a temporary folder behind. The writer is handed the path the temporary
// folder will have (`folder`, not made yet); each write_file_atomically into it (on this thread)
// makes an O_TMPFILE file in `parent`, the target's folder, and keeps its descriptor. make()
// then creates the folder and links the files into it, just before it is swapped in. Past
// kMaxUnnamed files (descriptors are a limited resource) the folder is made early and the rest
// are written into it by name, removed on SIGINT or SIGTERM as any temporary.
struct Staging {
  static constexpr size_t kMaxUnnamed = 256;
  std::string folder, parent, named;  // named: the target as the user gave it, for messages
  mode_t mode = 0;                    // the replaced folder's permissions (0: a new folder)
  bool made = false;
  Temporary registered;
  std::vector<std::pair<std::string, int>> files;  // (name in the folder, descriptor)

  ~Staging() {
    for (auto& f : files) ::close(f.second);
  }
  void keep(const std::string& name, int fd) {
    for (auto& f : files)
      if (f.first == name) {  // written again: the last write wins
        ::close(f.second);
        f.second = fd;
        return;
      }
    files.emplace_back(name, fd);
    if (files.size() >= kMaxUnnamed) make();
  }
  // Creates the folder and names the files kept so far in it.
  void make() {
    if (made) return;
    if (::mkdir(folder.c_str(), 0777) != 0)  // the umask decides, as for any new folder
      throw Error("cannot write '" + named + "': " + errno_text(errno) + " (creating '" + folder +
                  "')");
    made = true;
    registered.hold(folder, true);
    if (mode != 0) ::chmod(folder.c_str(), mode);
    for (auto& [name, fd] : files) {
      const std::string self = "/proc/self/fd/" + std::to_string(fd);
      const std::string to = folder + "/" + name;
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW) != 0)
        throw Error("cannot write '" + named + "': " + errno_text(errno) + " (naming '" + to +
                    "')");
    }
    for (auto& f : files) ::close(f.second);
    files.clear();
  }
};

thread_local Staging* staging = nullptr;  // the set being written on this thread, if any

// Whether `folder` can hold O_TMPFILE files (tmpfs, ext4, xfs, btrfs do; some do not).
bool makes_unnamed_files(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// write(out) into a new O_TMPFILE file in `folder`: its descriptor, flushed and synced. Throws
// naming `path` when a write fails; -1 when the file system cannot make such a file.
int fill_unnamed(const std::string& folder, const std::string& path, mode_t mode,
                 const std::function<void(std::ostream&)>& write) {
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (mode != 0) ::fchmod(fd, mode);  // keep the replaced file's permissions
  const int kept = ::dup(fd);         // the buffer closes `fd`
  if (kept < 0) {
    const int err = errno;
    ::close(fd);
    throw Error("cannot write '" + path + "': " + errno_text(err));
  }
  try {
    __gnu_cxx::stdio_filebuf<char> buf(fd, std::ios::out | std::ios::binary);
    std::ostream out(&buf);
    errno = 0;
    write(out);
    int err = out ? 0 : errno;  // the write that failed set it (EFBIG past ulimit -f, ENOSPC)
    if (out) out.flush(), err = out ? 0 : errno;
    if (!out || ::fsync(kept) != 0) {
      if (out) err = errno;
      throw Error("cannot write '" + path + "': " + (err ? errno_text(err) : "write failed (disk full?)"));
    }
  } catch (...) {
    ::close(kept);  // the unnamed file goes with its last descriptor: nothing to undo
    throw;
  }
  return kept;
}

// write(out) fills a file with no name yet (O_TMPFILE), which is named beside the target only to
// be renamed over it: a signal, SIGKILL included, leaves nothing behind while it is written.
// False when the file system cannot make such a file (then nothing was written).
bool write_unnamed(const std::string& path, const std::function<void(std::ostream&)>& write) {
  mode_t mode = 0;
  const std::string target = file_to_replace(path, mode);
  const std::string folder = parent_of(target);
  const int fd = fill_unnamed(folder, path, mode, write);
  if (fd < 0) return false;
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_it{fd};
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  Temporary registered;
  const std::string named = create_unique(folder, path, [&](const std::string& name) {
    return ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0;
  });
  registered.hold(named, false);
  if (std::rename(named.c_str(), target.c_str()) != 0) {
    const int err = errno;
    std::remove(named.c_str());
    throw Error("cannot replace '" + path + "': " + errno_text(err));
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  if (staging && !staging->made && parent_of(path) == staging->folder) {  // a file of a set
    const int fd = fill_unnamed(staging->parent, path, 0, write);
    if (fd < 0) throw Error("cannot write '" + path + "': the file system made no unnamed file");
    staging->keep(path.substr(staging->folder.size() + 1), fd);
    return;
  }
  if (write_unnamed(path, write)) return;
  replace_file(
      path,
      [&](const std::string& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw Error("cannot write '" + path + "': " + errno_text(errno));
        errno = 0;
        write(out);
        int err = out ? 0 : errno;  // the write that failed set it
        if (out) out.flush(), err = out ? 0 : errno;
        if (!out) {
          throw Error("cannot write '" + path +
                      "': " + (err ? errno_text(err) : "write failed (disk full?)"));
        }
      },
      false);
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

void write_file_atomically_at(const std::string& path,
                              const std::function<void(const std::string& tmp)>& write) {
  // A writer that needs a name cannot write into a set not made yet: make it now (its files
  // from here on are named temporaries, removed on SIGINT or SIGTERM).
  if (staging && !staging->made && parent_of(path) == staging->folder) staging->make();
  replace_file(path, write, true);
}

void write_directory_atomically(const std::string& dir,
                                const std::function<void(const std::string& tmp)>& write,
                                const std::function<bool(const std::string& name)>& replaceable) {
  bool exists = false;
  const std::string target = dir_to_replace(dir, replaceable, exists);
  struct stat st {};
  if (!staging && makes_unnamed_files(parent_of(target))) {
    Staging set;
    set.parent = parent_of(target);
    set.named = dir;
    if (exists && ::stat(target.c_str(), &st) == 0) set.mode = st.st_mode & 07777;
    // A name for the folder, free now; made only once every file is written.
    set.folder = create_unique(set.parent, dir, [](const std::string& name) {
      struct stat there {};
      if (::lstat(name.c_str(), &there) == 0) {
        errno = EEXIST;
        return false;
      }
      return true;
    });
    staging = &set;
    try {
      write(set.folder);
      staging = nullptr;
      set.make();
    } catch (const Error& e) {
      staging = nullptr;
      if (set.made) remove_tree(set.folder);
      throw Error("cannot write '" + dir + "': " + e.what());
    } catch (...) {
      staging = nullptr;
      if (set.made) remove_tree(set.folder);
      throw;
    }
    swap_in(set.folder, target, exists, dir);
    set.registered.release();
    return;
  }
  const std::string tmp = create_unique(parent_of(target), dir, [](const std::string& name) {
    return ::mkdir(name.c_str(), 0777) == 0;  // the umask decides, as for any new folder
  });
  Temporary registered;
  registered.hold(tmp, true);
  if (exists && ::stat(target.c_str(), &st) == 0) ::chmod(tmp.c_str(), st.st_mode & 07777);
  try {
    write(tmp);
  } catch (const Error& e) {
    remove_tree(tmp);
    throw Error("cannot write '" + dir + "': " + e.what());
  } catch (...) {
    remove_tree(tmp);
    throw;
  }
  swap_in(tmp, target, exists, dir);
}

void check_directory_replaceable(const std::string& dir,
                                 const std::function<bool(const std::string& name)>& replaceable) {
  bool exists = false;
  dir_to_replace(dir, replaceable, exists);
}

namespace {

struct stat regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error("cannot read '" + path + "': not a regular file (" +
                (S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket") + ")");
  return st;
}

}  // namespace

std::string read_file_prefix(const std::string& path, size_t bytes) {
  regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::string s(bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(bytes));
  if (in.bad()) throw Error("error reading '" + path + "'");
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

std::string read_file(const std::string& path, size_t max_bytes) {
  const struct stat st = regular_file(path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    throw Error("cannot read '" + path + "': " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(max_bytes) + " allowed");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  // One read into a string of the size stat gave (an ostringstream grew and copied its way to a
  // 58 MB model in 0.75 s); what a file that grew since holds past that is read on.
  std::string s(static_cast<size_t>(st.st_size), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  size_t got = static_cast<size_t>(in.gcount());
  if (got == s.size() && in.peek() != std::char_traits<char>::eof()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    s += rest.str();
    got = s.size();
    if (got > max_bytes)
      throw Error("cannot read '" + path + "': it grew past the " + std::to_string(max_bytes) +
                  " bytes allowed");
  }
  if (in.bad()) throw Error("error reading '" + path + "'");
  s.resize(got);
  return s;
}

}  // namespace fusebox
