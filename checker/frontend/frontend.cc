#include "checker/frontend/frontend.h"

#include <fmt/format.h>

#include "verbs_backend/replay_ops.h"

namespace qpcheck::frontend {

void Spec::read(const std::string& path, const lang::SearchPath& search) {
  program_ = lang::load_program(sources_, ast_, path, search);
}

void Spec::read_text(const std::string& name, const std::string& text) {
  int file = sources_.add(name, text);
  program_ = lang::Program{};
  program_.main_file = file;
  program_.decls = lang::parse_file(sources_, file, ast_);
}

lang::Compiled Spec::compile(const lang::ParamOverrides& params) const {
  return lang::typecheck(program_, sources_, params, verbs::replay_vocabulary());
}

lang::Matrix Spec::matrix(const model::Model& base, bool check_deadlock) const {
  return lang::resolve_matrix(program_, sources_, base, check_deadlock, verbs::replay_vocabulary());
}

std::optional<Failure> Spec::attempt(const std::function<void()>& step) const {
  try {
    step();
  } catch (const lang::SpecError& e) {
    return Failure{Failure::Kind::kSpec, render(e.diagnostics()), e.what()};
  } catch (const lang::UsageError& e) {
    return Failure{Failure::Kind::kUsage, fmt::format("qpcheck: error: {}\n", e.what()), e.what()};
  }
  return std::nullopt;
}

std::string Spec::render(const std::vector<lang::Diagnostic>& diagnostics) const {
  std::string out;
  for (const lang::Diagnostic& d : diagnostics) out += lang::format_diagnostic(sources_, d);
  return out;
}

std::vector<std::string> Spec::files() const {
  std::vector<std::string> out;
  for (int i = 0; i < sources_.size(); ++i) out.push_back(sources_.file(i).path);
  return out;
}

lang::ParamOverrides parse_param_assignments(const std::vector<std::string>& params) {
  lang::ParamOverrides out;
  for (const std::string& p : params) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) throw lang::UsageError(fmt::format("--param {}: expected NAME=VALUE", p));
    out.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  return out;
}

bool is_symbolic_value(const std::string& value) {
  return value == "*" || value.find("..") != std::string::npos || value.find(',') != std::string::npos;
}

}  // namespace qpcheck::frontend
