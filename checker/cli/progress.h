// The progress line of long searches: states, states/s, depth, queue and memory on stderr, rewritten in place about
// once per second, only when stderr is a terminal (never in logs or CI output).
#pragma once

#include <functional>

#include "checker/explore/explorer.h"

namespace qpcheck::cli {

// An explore::Options::progress callback writing to stderr, or an empty function when stderr is not a terminal.
// The explorer calls it from the first second on, so runs shorter than a second print nothing.
std::function<void(const explore::Stats&)> progress_printer();

// Erases the progress line if one was printed (call before printing the report).
void clear_progress();

}  // namespace qpcheck::cli
