#include "core/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "core/base/error.h"

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
  void discard() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    std::remove(path.c_str());
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

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  replace_file(
      path,
      [&](const std::string& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw Error("cannot write '" + path + "': " + errno_text(errno));
        write(out);
        errno = 0;
        out.flush();
        if (!out) {
          const int err = errno;
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
  replace_file(path, write, true);
}

std::string read_file(const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error("cannot read '" + path + "': not a regular file (" +
                (S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket") + ")");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    throw Error("cannot read '" + path + "': " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(max_bytes) + " allowed");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error("error reading '" + path + "'");
  return s.str();
}

}  // namespace fusebox
