// The progress line of long searches: states, states/s, depth, queue and memory on stderr, rewritten in place about
// once per second, only when stderr is a terminal (never in logs or CI output).
#pragma once

#include <functional>
#include <string>

#include "checker/explore/explorer.h"

namespace qpcheck::cli {

// An explore::Options::progress callback writing to stderr, or an empty function when stderr is not a terminal.
// The explorer calls it from the first second on, so runs shorter than a second print nothing.
std::function<void(const model::SearchStats&)> progress_printer();

// Erases the progress line if one was printed (call before printing the report).
void clear_progress();

// A progress printer for the other engines (Z3, synthesis): `line` rewrites the terminal's progress line, or does
// nothing when stderr is not a terminal. enabled() says which, so that callers build lines only when shown.
bool progress_enabled();
void progress_line(const std::string& line);

}  // namespace qpcheck::cli
