#pragma once
// Files we write are written whole or not at all: content goes to a temporary file beside the
// target (a short name, ".fusebox-XXXXXX", so any valid target name works), is flushed and
// synced, then renamed over it. An existing file is replaced only on success, and only when it is
// a regular file: a device (/dev/null), FIFO, socket or directory there is refused, never
// replaced. A symbolic link is followed: the regular file it names is replaced and the link stays
// (a link to nothing, or to anything but a regular file, is refused).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace fusebox {

// Calls write(stream) on a temporary file next to `path`, then renames it to `path`.
// Throws fusebox::Error naming `path` (first; the temporary file, if at all, after it) when the
// target is not a regular file, the directory is not writable or writing fails; the temporary file
// is removed and any existing `path` is left untouched.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
void write_file_atomically(const std::string& path, const std::string& content);
// For writers that need a file name (SQLite): write(tmp) fills the temporary file `tmp`, which
// then replaces `path`. A fusebox::Error from write is rethrown naming `path` first.
void write_file_atomically_at(const std::string& path,
                              const std::function<void(const std::string& tmp)>& write);

// A set of files written whole: write(tmp) fills a new temporary folder beside `dir`, which then
// takes the place of `dir` (swapped in with one rename, or renameat2 RENAME_EXCHANGE when `dir`
// exists), so `dir` holds either all the old files or all the new ones. Where the file system
// makes O_TMPFILE files, the files write_file_atomically writes into `tmp` (on this thread) have
// no name, and the folder does not exist, until write returns: a signal, SIGKILL included, leaves
// nothing behind. A writer must write its files that way (or through write_file_atomically_at,
// which makes the folder first). An existing `dir` must be
// a directory (a link to one is followed) whose entries are all regular files for which
// `replaceable(name)` is true: the files this command writes. Anything else there is refused
// rather than deleted. Throws fusebox::Error naming `dir`; on failure `dir` is untouched.
void write_directory_atomically(const std::string& dir,
                                const std::function<void(const std::string& tmp)>& write,
                                const std::function<bool(const std::string& name)>& replaceable);
// The checks write_directory_atomically makes of an existing `dir` before it writes anything, for
// a command to make before a long run: throws the same fusebox::Error.
void check_directory_replaceable(const std::string& dir,
                                 const std::function<bool(const std::string& name)>& replaceable);

// Reads a whole regular file of at most `max_bytes`; throws fusebox::Error naming the path when
// it cannot, when it is not a regular file (a FIFO would block, a device such as /dev/zero never
// ends) or when it is larger than `max_bytes`.
std::string read_file(const std::string& path, size_t max_bytes = SIZE_MAX);
// The first `bytes` of a regular file (all of it when shorter), with read_file's checks but for
// the size: for a header read ahead of the data (read_npy_shape).
std::string read_file_prefix(const std::string& path, size_t bytes);

}  // namespace fusebox
