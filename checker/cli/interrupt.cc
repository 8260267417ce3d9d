#include "checker/cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace qpcheck::cli {

namespace {

// Process-wide by necessity: a signal handler can reach nothing else. Lock-free atomics are async-signal-safe.
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
constexpr int kTempSlots = 64;
std::atomic<const char*> g_temp[kTempSlots];
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<const char*>::is_always_lock_free);

void on_signal(int sig) {
  if (!g_interrupted.exchange(true)) {
    g_signal.store(sig);
    return;  // the search stops at its next safe point
  }
  // Second signal: end now, leaving no temporary report behind (unlink is async-signal-safe), by the signal itself
  // so that the parent sees how the process ended.
  for (auto& slot : g_temp) {
    if (const char* p = slot.load()) ::unlink(p);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

const std::atomic<bool>& install_interrupt_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return g_interrupted;
}

void restore_default_interrupt_handlers() {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  if (g_interrupted.load()) ::raise(g_signal.load());
}

const std::atomic<bool>& interrupt_flag() { return g_interrupted; }

int interrupt_signal() { return g_signal.load(); }

int register_temp_file(const char* path) {
  for (int i = 0; i < kTempSlots; ++i) {
    const char* expected = nullptr;
    if (g_temp[i].compare_exchange_strong(expected, path)) return i;
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot >= 0 && slot < kTempSlots) g_temp[slot].store(nullptr);
}

void reset_interrupt_for_testing() {
  g_interrupted.store(false);
  g_signal.store(0);
}

}  // namespace qpcheck::cli
