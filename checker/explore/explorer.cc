#include "checker/explore/explorer.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "checker/explore/searcher.h"

namespace qpcheck::explore {

uint64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

model::CheckResult explore(model::TransitionSystem &system, const Options &options) {
  if (options.transport != nullptr) return internal::search_distributed(system, options);
  if (options.storage != Storage::kExact) return internal::search_partial(system, options);
  if (options.threads > 1 && options.strategy == Strategy::kBfs && !options.por) {
    std::vector<std::unique_ptr<model::TransitionSystem>> workers;
    for (int t = 1; t < options.threads; ++t) {
      std::unique_ptr<model::TransitionSystem> w = system.clone();
      if (!w) break;
      workers.push_back(std::move(w));
    }
    if (static_cast<int>(workers.size()) == options.threads - 1) {
      return internal::search_sharded(system, options, std::move(workers));
    }
  }
  return internal::search_sequential(system, options);
}

}  // namespace qpcheck::explore
