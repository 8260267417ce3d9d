// Report files written whole or not at all (docs/cli.md, "Report files"): an AtomicFile is a temporary file created
// beside its destination when it is opened (before the search, so an unwritable path is a usage error up front) and
// renamed over the destination by commit() once everything is written and flushed. A run that fails or is killed
// before that leaves the destination as it was: never a truncated report, never the previous report destroyed.
//
// A destination that exists and is not a regular file (a character device such as /dev/null or /dev/stdout, a FIFO)
// is written in place instead: renaming over it would replace the device node.
#pragma once

#include <cstdio>
#include <string>

namespace qpcheck::cli {

class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless committed

  // Creates the temporary file ("DEST.tmp-XXXXXX" in DEST's folder). Returns "" on success, else why not (the folder
  // does not exist or is not writable, DEST is a folder, the path is empty).
  std::string open(const std::string& destination);
  bool is_open() const { return file_ != nullptr; }
  const std::string& destination() const { return destination_; }

  // Appends `text`. Returns false once a write has failed (disk full); the destination is then left untouched.
  bool write(const std::string& text);
  // Flushes, syncs and renames the temporary file over the destination. Returns "" on success, else why not (the
  // destination is then untouched and the temporary file removed).
  std::string commit();

 private:
  void discard();
  std::string destination_;
  std::string temp_;
  std::FILE* file_ = nullptr;
  bool in_place_ = false;   // a device or FIFO: written directly
  bool failed_ = false;
  int slot_ = -1;           // interrupt.h's registry of temporary files
};

}  // namespace qpcheck::cli
