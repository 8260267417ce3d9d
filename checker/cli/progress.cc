#include "checker/cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace qpcheck::cli {

namespace {
bool printed = false;  // a progress line is on the terminal (stderr is one process-wide stream)
}

std::function<void(const model::SearchStats &)> progress_printer() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](const model::SearchStats &s) {
    double rate = s.seconds > 0 ? s.states / s.seconds : 0;
    std::string line = fmt::format("\r\033[K{} states, {:.0f} states/s, depth {}, queue {}, memory {:.1f} MiB, {:.0f} s",
                                   s.states, rate, s.depth, s.queue, s.store_bytes / 1048576.0, s.seconds);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    printed = true;
  };
}

bool progress_enabled() { return isatty(STDERR_FILENO) != 0; }

void progress_line(const std::string& line) {
  if (!progress_enabled()) return;
  std::string text = "\r\033[K" + line;
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  printed = true;
}

void clear_progress() {
  if (!printed) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  printed = false;
}

}  // namespace qpcheck::cli
