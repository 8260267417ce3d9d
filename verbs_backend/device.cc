#include "verbs_backend/device.h"

#include <cstring>

#include <fmt/format.h>

namespace qpcheck::verbs {

std::string Status::text() const {
  if (ok()) return "ok";
  return fmt::format("{}: {}", api, message);
}

Status fail(std::string api, int err, std::string context) {
  Status s;
  s.api = std::move(api);
  s.err = err;
  s.message = err ? fmt::format("{} (errno {})", std::strerror(err), err) : std::string("failed");
  if (!context.empty()) s.message += ": " + context;
  return s;
}

const char* ep_name(Ep e) { return e == Ep::kActive ? "ACTIVE" : "PASSIVE"; }

}  // namespace qpcheck::verbs
