// SIGINT and SIGTERM during a search (docs/cli.md, "Signals"): the first one sets a flag that the search reads where
// it checks its limits (explore::Options::interrupt, gate::Options::interrupt), so the run ends as inconclusive
// ("interrupted") with its statistics and its reports written; a second one ends the process at once, by the same
// signal, after removing the temporary files of reports not yet complete (atomic_file.h). SIGPIPE is ignored: a
// closed stdout (`| head -1`) fails the writes to stdout, never the report files.
#pragma once

#include <atomic>

namespace qpcheck::cli {

// Installs the handlers (again, if something replaced them) and returns the flag they set.
const std::atomic<bool>& install_interrupt_handlers();

// Puts SIGINT and SIGTERM back to their default action (a run that does not read the flag: the Z3 engines); if one
// already arrived, the process ends by it now, as it would have without the handlers.
void restore_default_interrupt_handlers();

// The flag, whether or not the handlers are installed (false until a signal arrives).
const std::atomic<bool>& interrupt_flag();

// The signal that set the flag (SIGINT or SIGTERM), 0 if none.
int interrupt_signal();

// Paths of temporary report files, removed by the handler of a second signal. Up to 64 at once; a path must stay
// valid until unregistered. Returns a slot for unregister_temp_file, -1 if all are in use (then not removed).
int register_temp_file(const char* path);
void unregister_temp_file(int slot);

// For tests: clears the flag, as if no signal had arrived.
void reset_interrupt_for_testing();

}  // namespace qpcheck::cli
