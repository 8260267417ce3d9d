#include "tests/support/corpus_header.h"

#include <fstream>
#include <optional>
#include <sstream>

namespace qpcheck::testing {

namespace {

std::vector<std::pair<std::string, std::string>> key_values(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream ss(text);
  std::string kv;
  while (ss >> kv) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream ss(text);
  std::string w;
  while (ss >> w) out.push_back(w);
  return out;
}

}  // namespace

lang::ParamOverrides CorpusHeader::overrides() const {
  lang::ParamOverrides out;
  for (const std::string& p : params) {
    size_t eq = p.find('=');
    out.emplace_back(p.substr(0, eq), eq == std::string::npos ? "" : p.substr(eq + 1));
  }
  return out;
}

CorpusHeader read_corpus_header(const std::filesystem::path& file) {
  std::ifstream in(file);
  CorpusHeader h;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("//", 0) != 0) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      break;
    }
    std::string body = line.substr(2);
    auto take = [&](const std::string& key) -> std::optional<std::string> {
      size_t p = body.find_first_not_of(' ');
      if (p == std::string::npos || body.compare(p, key.size(), key) != 0) return std::nullopt;
      std::string rest = body.substr(p + key.size());
      size_t b = rest.find_first_not_of(' ');
      return b == std::string::npos ? "" : rest.substr(b);
    };
    if (auto v = take("params:")) {
      for (std::string& w : words(*v)) h.params.push_back(std::move(w));
    } else if (auto v = take("expect:")) {
      for (auto& [k, value] : key_values(*v)) h.expect[k] = value;
    } else if (auto v = take("expect-error:")) {
      h.expect_error = *v;
    } else if (auto v = take("expect-warning:")) {
      h.expect_warnings.push_back(*v);
    } else if (auto v = take("expect-message:")) {
      h.expect_message = *v;
    } else if (auto v = take("expect-property:")) {
      h.expect_property = words(*v);
    } else if (auto v = take("expect-all-violations:")) {
      h.expect_all = key_values(*v);
    } else if (auto v = take("expect-overrides:")) {
      h.expect_overrides = *v;
    } else if (auto v = take("bmc-depth:")) {
      std::istringstream ss(*v);
      if (!(ss >> h.bmc_depth)) h.bmc_depth = -1;
    }
  }
  return h;
}

}  // namespace qpcheck::testing
