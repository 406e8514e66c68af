// write_file_atomically: only a regular file is replaced, any valid target name works, and an
// error names the target (not the temporary file beside it).
#include "core/base/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>

#include "core/base/error.h"
#include "tests/support/temp_dir.h"

namespace fusebox {
namespace {

std::string fresh_dir(const std::string& name) {
  std::string dir = test::process_temp_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AtomicFile, RefusesToReplaceADevice) {
  std::string msg = error_of([] { write_file_atomically("/dev/null", std::string("x")); });
  EXPECT_NE(msg.find("'/dev/null'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("character device"), std::string::npos) << msg;
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is still a character device";
}

TEST(AtomicFile, RefusesToReplaceAFifoOrADirectory) {
  std::string dir = fresh_dir("refuse");
  std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string msg = error_of([&] { write_file_atomically(fifo, std::string("x")); });
  EXPECT_NE(msg.find("'" + fifo + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("FIFO"), std::string::npos) << msg;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  std::filesystem::create_directory(dir + "/sub");
  EXPECT_THROW(write_file_atomically(dir + "/sub", std::string("x")), Error);
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/sub"));
  EXPECT_EQ(entries(dir), 2u) << "no temporary file left behind";
}

TEST(AtomicFile, ALinkIsFollowedToTheFileItNames) {
  std::string dir = fresh_dir("link");
  write_file_atomically(dir + "/real.txt", std::string("old"));
  std::filesystem::create_symlink("real.txt", dir + "/link.txt");
  write_file_atomically(dir + "/link.txt", std::string("new"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.txt")) << "the link stays a link";
  EXPECT_EQ(read_file(dir + "/real.txt"), "new");
  std::filesystem::create_symlink("/dev/null", dir + "/to_null");
  EXPECT_THROW(write_file_atomically(dir + "/to_null", std::string("x")), Error);
  std::filesystem::create_symlink("absent/file", dir + "/dangling");
  EXPECT_THROW(write_file_atomically(dir + "/dangling", std::string("x")), Error);
  EXPECT_EQ(entries(dir), 4u) << "no temporary file left behind";
}

TEST(AtomicFile, AnyValidNameWorks) {
  std::string dir = fresh_dir("long");
  const std::string name(255, 'n');  // NAME_MAX on Linux file systems
  write_file_atomically(dir + "/" + name, std::string("long"));
  EXPECT_EQ(read_file(dir + "/" + name), "long");
  write_file_atomically(dir + "/" + name, std::string("again"));
  EXPECT_EQ(read_file(dir + "/" + name), "again");
  EXPECT_EQ(entries(dir), 1u);
}

TEST(AtomicFile, KeepsTheReplacedFilesPermissions) {
  std::string dir = fresh_dir("mode");
  write_file_atomically(dir + "/f", std::string("1"));
  ASSERT_EQ(::chmod((dir + "/f").c_str(), 0640), 0);
  write_file_atomically(dir + "/f", std::string("2"));
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// Files past a size limit fail to write as on a full disk (EFBIG rather than ENOSPC).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit small = old_;
    small.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

TEST(AtomicFile, AFailedWriteNamesTheTarget) {
  std::string dir = fresh_dir("full");
  std::string path = dir + "/big.bin";
  write_file_atomically(path, std::string("old"));
  std::string msg;
  {
    FileSizeLimit limit(4096);
    msg = error_of([&] { write_file_atomically(path, std::string(1 << 20, 'x')); });
  }
  EXPECT_EQ(msg.rfind("cannot write '" + path + "'", 0), 0u) << msg;
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(entries(dir), 1u) << "no temporary file left behind";
}

TEST(AtomicFile, AWriterNamingTheTemporaryFileIsReportedByTheTarget) {
  std::string dir = fresh_dir("at");
  std::string path = dir + "/db.sqlite";
  std::string msg = error_of([&] {
    write_file_atomically_at(
        path, [](const std::string& tmp) { throw Error(tmp + ": database or disk is full"); });
  });
  EXPECT_EQ(msg.rfind("cannot write '" + path + "': ", 0), 0u) << msg;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(entries(dir), 0u);
}

bool any_name(const std::string&) {
  return true;
}

TEST(AtomicDirectory, ANewSetReplacesTheOldOneWhole) {
  std::string parent = fresh_dir("dir");
  std::string dir = parent + "/set";
  write_directory_atomically(
      dir,
      [](const std::string& tmp) {
        write_file_atomically(tmp + "/a", std::string("old a"));
        write_file_atomically(tmp + "/b", std::string("old b"));
      },
      any_name);
  EXPECT_EQ(entries(dir), 2u);
  write_directory_atomically(
      dir + "/",
      [](const std::string& tmp) { write_file_atomically(tmp + "/a", std::string("new a")); },
      any_name);
  EXPECT_EQ(read_file(dir + "/a"), "new a");
  EXPECT_FALSE(std::filesystem::exists(dir + "/b")) << "the old set is gone whole";
  EXPECT_EQ(entries(parent), 1u) << "no temporary folder left behind";
}

TEST(AtomicDirectory, AFailedWriteLeavesTheOldSetAndNamesTheFolder) {
  std::string parent = fresh_dir("dirfail");
  std::string dir = parent + "/set";
  write_directory_atomically(
      dir, [](const std::string& tmp) { write_file_atomically(tmp + "/a", std::string("old")); },
      any_name);
  std::string msg = error_of([&] {
    write_directory_atomically(
        dir,
        [](const std::string& tmp) {
          write_file_atomically(tmp + "/a", std::string("new"));
          throw Error(tmp + "/b: disk full");
        },
        any_name);
  });
  EXPECT_EQ(msg.rfind("cannot write '" + dir + "': ", 0), 0u) << msg;
  EXPECT_EQ(read_file(dir + "/a"), "old");
  EXPECT_EQ(entries(parent), 1u) << "no temporary folder left behind";
}

TEST(AtomicDirectory, RefusesAFileAFifoAndFilesNotItsOwn) {
  std::string parent = fresh_dir("dirrefuse");
  auto nothing = [](const std::string&) {};
  write_file_atomically(parent + "/file", std::string("x"));
  EXPECT_NE(error_of([&] {
              write_directory_atomically(parent + "/file", nothing, any_name);
            }).find("not a directory"),
            std::string::npos);
  EXPECT_EQ(read_file(parent + "/file"), "x");
  std::filesystem::create_directory(parent + "/withfifo");
  ASSERT_EQ(::mkfifo((parent + "/withfifo/p").c_str(), 0600), 0);
  EXPECT_THROW(write_directory_atomically(parent + "/withfifo", nothing, any_name), Error);
  EXPECT_THROW(check_directory_replaceable(parent + "/withfifo", any_name), Error);
  std::filesystem::create_directory(parent + "/notes");
  write_file_atomically(parent + "/notes/notes.txt", std::string("keep"));
  auto only_npy = [](const std::string& name) {
    return name.size() > 4 && name.substr(name.size() - 4) == ".npy";
  };
  std::string msg =
      error_of([&] { write_directory_atomically(parent + "/notes", nothing, only_npy); });
  EXPECT_NE(msg.find("notes.txt"), std::string::npos) << msg;
  EXPECT_EQ(read_file(parent + "/notes/notes.txt"), "keep");
  EXPECT_EQ(entries(parent), 3u) << "no temporary folder left behind";
}

// Files beyond the ones a set keeps unnamed (descriptors are limited) are written by name into its
// folder: the set still lands whole, and a file written twice keeps its last content.
TEST(AtomicDirectory, ASetOfManyFilesLandsWhole) {
  std::string parent = fresh_dir("dirmany");
  write_directory_atomically(
      parent + "/set",
      [](const std::string& tmp) {
        write_file_atomically(tmp + "/again", std::string("first"));
        write_file_atomically(tmp + "/again", std::string("last"));
        for (int i = 0; i < 300; ++i)
          write_file_atomically(tmp + "/" + std::to_string(i), std::to_string(i));
      },
      any_name);
  EXPECT_EQ(entries(parent + "/set"), 301u);
  EXPECT_EQ(read_file(parent + "/set/299"), "299");
  EXPECT_EQ(read_file(parent + "/set/0"), "0");
  EXPECT_EQ(read_file(parent + "/set/again"), "last");
  EXPECT_EQ(entries(parent), 1u) << "no temporary folder left behind";
}

TEST(AtomicDirectory, ALinkToAFolderIsFollowed) {
  std::string parent = fresh_dir("dirlink");
  std::filesystem::create_directory(parent + "/real");
  std::filesystem::create_directory_symlink("real", parent + "/link");
  write_directory_atomically(
      parent + "/link",
      [](const std::string& tmp) { write_file_atomically(tmp + "/a", std::string("1")); },
      any_name);
  EXPECT_TRUE(std::filesystem::is_symlink(parent + "/link"));
  EXPECT_EQ(read_file(parent + "/real/a"), "1");
  EXPECT_EQ(entries(parent), 2u);
}

// Runs `write` in a child process; the signal the child died of, or -1.
int signal_of_child(const std::function<void()>& write) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    write();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

// The write signals its own process halfway, as a user's Ctrl-C, a `kill` or the OOM killer
// would: SIGINT and SIGTERM remove the temporary on their way out (a file, the named file a
// SQLite writer needs, a folder of files); SIGKILL cannot be caught, and a file written through
// a stream has no name until it is complete, so it leaves nothing either. The old file stays.
TEST(AtomicFile, ASignalMidWriteLeavesNoTemporaryAndTheOldFile) {
  for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
    const std::string dir = fresh_dir("signal" + std::to_string(sig));
    const std::string path = dir + "/out.json";
    write_file_atomically(path, std::string("old"));
    EXPECT_EQ(signal_of_child([&] {
                write_file_atomically(path, [&](std::ostream& out) {
                  out << std::string(100000, 'x');
                  out.flush();
                  ::kill(::getpid(), sig);
                  ::pause();
                });
              }),
              sig);
    EXPECT_EQ(read_file(path), "old");
    EXPECT_EQ(entries(dir), 1u) << "signal " << sig << ": a temporary was left";
    // A set of files is unnamed until every file is written: not even SIGKILL leaves its folder.
    EXPECT_EQ(signal_of_child([&] {
                write_directory_atomically(
                    dir + "/set",
                    [&](const std::string& tmp) {
                      write_file_atomically(tmp + "/a.json", std::string("new"));
                      ::kill(::getpid(), sig);
                      ::pause();
                    },
                    any_name);
              }),
              sig);
    EXPECT_EQ(entries(dir), 1u) << "signal " << sig << ": the temporary folder was left";
    if (sig == SIGKILL) continue;  // a named temporary cannot outlive SIGKILL's lack of warning
    EXPECT_EQ(signal_of_child([&] {
                write_file_atomically_at(dir + "/t.sqlite", [&](const std::string& tmp) {
                  std::ofstream(tmp) << "a database, half written";
                  ::kill(::getpid(), sig);
                  ::pause();
                });
              }),
              sig);
    EXPECT_EQ(entries(dir), 1u) << "signal " << sig << ": the named temporary was left";
    // Past the files a set keeps unnamed, the rest are named in its folder: removed on the way out.
    EXPECT_EQ(signal_of_child([&] {
                write_directory_atomically(
                    dir + "/many",
                    [&](const std::string& tmp) {
                      for (int i = 0; i < 300; ++i)
                        write_file_atomically(tmp + "/" + std::to_string(i), std::string("x"));
                      ::kill(::getpid(), sig);
                      ::pause();
                    },
                    any_name);
              }),
              sig);
    EXPECT_EQ(entries(dir), 1u) << "signal " << sig << ": the made folder was left";
  }
}

}  // namespace
}  // namespace fusebox
