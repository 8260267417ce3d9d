#include "checker/cli/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "checker/cli/interrupt.h"

namespace qpcheck::cli {

namespace {

mode_t file_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!in_place_ && !temp_.empty()) ::unlink(temp_.c_str());
  unregister_temp_file(slot_);
  slot_ = -1;
  temp_.clear();
}

std::string AtomicFile::open(const std::string& destination) {
  discard();
  destination_ = destination;
  failed_ = false;
  if (destination.empty()) return "the path is empty";
  struct stat st {};
  if (::stat(destination.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return "it is a folder";
    // A device or FIFO: written in place (O_NONBLOCK: a FIFO without a reader is refused, not waited for).
    int fd = ::open(destination.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file_ = ::fdopen(fd, "w");
    if (file_ == nullptr) {
      ::close(fd);
      return std::strerror(errno);
    }
    in_place_ = true;
    return "";
  }
  in_place_ = false;
  std::filesystem::path p(destination);
  std::string name = p.filename().string();
  if (name.size() > 200) name.resize(200);  // the temporary name must fit NAME_MAX
  std::string temp = (p.parent_path() / ("." + name + ".tmp-XXXXXX")).string();
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    return fmt::format("cannot create a file in the folder '{}' ({})", dir.size() > 200 ? dir.substr(0, 200) + "..." : dir,
                       std::strerror(errno));
  }
  ::fchmod(fd, file_mode());
  file_ = ::fdopen(fd, "w");
  if (file_ == nullptr) {
    int e = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return std::strerror(e);
  }
  temp_ = std::move(temp);
  slot_ = register_temp_file(temp_.c_str());
  return "";
}

bool AtomicFile::write(const std::string& text) {
  if (file_ == nullptr || failed_) return false;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) failed_ = true;
  return !failed_;
}

std::string AtomicFile::commit() {
  if (file_ == nullptr) return "not open";
  bool ok = !failed_ && std::fflush(file_) == 0;
  int e = ok ? 0 : (errno != 0 ? errno : EIO);
  if (ok && !in_place_ && ::fsync(::fileno(file_)) != 0) {
    ok = false;
    e = errno;
  }
  if (std::fclose(file_) != 0 && ok) {
    ok = false;
    e = errno;
  }
  file_ = nullptr;
  if (ok && !in_place_ && ::rename(temp_.c_str(), destination_.c_str()) != 0) {
    ok = false;
    e = errno;
  }
  if (ok && !in_place_) {
    unregister_temp_file(slot_);
    slot_ = -1;
    temp_.clear();  // renamed: nothing to remove
  }
  discard();
  return ok ? "" : std::string(std::strerror(e));
}

}  // namespace qpcheck::cli
