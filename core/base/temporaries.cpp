#include "core/base/temporaries.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace fusebox {

namespace {

constexpr int kSlots = 32;
constexpr size_t kPathMax = 4096;
enum State : int { kFree = 0, kTaken = 1, kFile = 2, kFolder = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathMax];
};
Slot g_slots[kSlots];
struct sigaction g_previous[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};

// A folder's entries (files: what our temporary folders hold) and then the folder, with
// open/getdents64/unlinkat/rmdir only.
void remove_folder(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
        if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) ::unlinkat(fd, d->d_name, 0);
        at += d->d_reclen;
      }
    }
    ::close(fd);
  }
  ::rmdir(path);
}

void on_signal(int sig) {
  for (Slot& s : g_slots) {
    const int st = s.state.load();
    if (st == kFile) ::unlink(s.path);
    else if (st == kFolder) remove_folder(s.path);
  }
  const int i = sig == SIGINT ? 0 : 1;
  ::sigaction(sig, &g_previous[i], nullptr);  // what it did before: end the program, or theirs
  ::raise(sig);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < 2; ++i) {
      struct sigaction now {};
      ::sigaction(kSignals[i], nullptr, &g_previous[i]);
      if (g_previous[i].sa_handler == SIG_IGN) continue;  // ignored (nohup, a background job): left so
      now.sa_handler = on_signal;
      sigemptyset(&now.sa_mask);
      ::sigaction(kSignals[i], &now, nullptr);
    }
  });
}

}  // namespace

void Temporary::hold(const std::string& path, bool folder) {
  release();
  if (path.size() >= kPathMax) return;
  install_once();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kTaken)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(folder ? kFolder : kFile);
    slot_ = i;
    return;
  }
}

void Temporary::release() {
  if (slot_ < 0) return;
  g_slots[slot_].state.store(kFree);
  slot_ = -1;
}

}  // namespace fusebox
