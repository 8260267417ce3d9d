#include "checker/lang/typecheck_params.h"

#include <algorithm>

#include <fmt/format.h>

#include "checker/lang/numbers.h"

namespace qpcheck::lang {

namespace {

std::string qualified(const Ident& id) { return id.module.empty() ? id.name : id.module + "::" + id.name; }

}  // namespace

int64_t parse_param_value(const std::string& name, const model::Type* t, const std::string& text) {
  auto bad = [&](const std::string& why) -> int64_t {
    throw UsageError(fmt::format("--param {}={}: {}", name, text, why));
  };
  switch (t->kind) {
    case model::TypeKind::kBool:
      if (text == "true") return 1;
      if (text == "false") return 0;
      return bad("expected true or false");
    case model::TypeKind::kEnum:
      for (size_t i = 0; i < t->constants.size(); ++i) {
        if (t->constants[i] == text) return static_cast<int64_t>(i);
      }
      {
        std::string all;
        for (const std::string& c : t->constants) all += (all.empty() ? "" : ", ") + c;
        return bad(fmt::format("expected one of {}", all));
      }
    default: {
      std::optional<int64_t> v = parse_int64(text);
      if (!v) return bad(fmt::format("expected an integer in {}", model::type_name(t)));
      if (*v < t->lo || *v > t->hi) return bad(fmt::format("value out of range {}", model::type_name(t)));
      return *v;
    }
  }
}

void ParamSettings::index(const Decl& d) {
  int f = d.span.file;
  const std::string& n = d.name.name;
  std::vector<int>& files = param_files_[n];
  if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  param_spans_.emplace(std::make_pair(f, n), d.name.span);
}

void ParamSettings::collect(const Program& program, const ParamOverrides& overrides, const ImportGraph& graph) {
  for (const Decl* d : program.decls) {
    if (d->kind != DeclKind::kSet) continue;
    int target = graph.resolve(d->name, d->span.file, param_files_[d->name.name],
                               [&](int f) { return where(param_spans_.at({f, d->name.name})); });
    std::string written = qualified(d->name);
    for (const Setting& s : settings_) {
      if (s.name == d->name.name && s.target == target) {
        throw SpecError(d->span, fmt::format("parameter '{}' is already set at {}", written, where(s.decl->span)));
      }
    }
    settings_.push_back(Setting{written, d->name.name, d->path, d, target});
  }
  for (const auto& [name, value] : overrides) {
    // Not a structured binding: the lambda below captures `plain` (clang 14, which builds the fuzzers, refuses that).
    const std::pair<std::string, std::string> split = split_qualified(name);
    const std::string& module = split.first;
    const std::string& plain = split.second;
    int target = -1;
    try {
      target = graph.resolve_usage(module, plain, program.main_file, param_files_[plain],
                                   [&](int f) { return where(param_spans_.at({f, plain})); });
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--param {}={}: {}", name, value, e.what()));
    }
    settings_.push_back(Setting{name, plain, value, nullptr, target});
  }
}

int64_t ParamSettings::value(const Decl& d, int file, const std::string& shown, const model::Type* t,
                             int64_t fallback) {
  int64_t v = fallback;
  for (Setting& s : settings_) {
    if (s.name != d.name.name || s.target != file) continue;
    s.used = true;
    if (s.decl == nullptr) {
      s.matched = shown;
      v = parse_param_value(s.written, t, s.value);
    } else {
      try {
        v = parse_param_value(s.written, t, s.value);
      } catch (const UsageError& e) {
        const std::string why = e.what();  // "--param NAME=TEXT: why"
        throw SpecError(s.decl->index.span,
                        fmt::format("set {} = {}: {}", s.written, s.value, why.substr(why.find(": ") + 2)));
      }
    }
  }
  param_values_[shown] = model::render_scalar(t, v);
  return v;
}

void ParamSettings::check_retired_and_unknown_sets(const RetiredLookup& retired_at) const {
  for (const Setting& s : settings_) {
    if (s.used) continue;
    std::optional<Retirement> r = s.target >= 0 ? retired_at(s.target, s.name) : std::nullopt;
    std::string retired = r ? fmt::format("'{}' is retired (at {}): {}", s.written, where(r->span), r->message) : "";
    if (s.decl != nullptr) {
      if (!retired.empty()) throw SpecError(s.decl->name.span, fmt::format("'set {}': {}", s.written, retired));
      throw SpecError(s.decl->name.span,
                      fmt::format("'set {}': the spec declares no parameter '{}'", s.written, s.written));
    }
    if (!retired.empty()) throw UsageError(fmt::format("--param {}={}: {}", s.written, s.value, retired));
  }
}

std::vector<std::string> ParamSettings::targets(
    const std::vector<std::pair<std::string, std::string>>& declared) const {
  std::vector<std::string> out;
  for (const Setting& s : settings_) {
    if (s.decl != nullptr) continue;
    if (!s.used) {
      std::string known;
      for (const auto& p : declared) known += (known.empty() ? "" : ", ") + p.first;
      throw UsageError(fmt::format("unknown parameter '{}' in --param {}={} (the spec declares: {})", s.written,
                                   s.written, s.value, known.empty() ? "no parameters" : known));
    }
    out.push_back(s.matched);
  }
  return out;
}

std::string ParamSettings::bound_note(const std::vector<std::string>& params, bool raise) const {
  if (params.empty()) return "";
  std::string names, flags;
  for (size_t i = 0; i < params.size(); ++i) {
    const char* sep = i == 0 ? "" : i + 1 == params.size() ? " and " : ", ";
    names += fmt::format("{}{} = {}", sep, params[i], param_values_.at(params[i]));
    flags += fmt::format("{}--param {}=N", i == 0 ? "" : ", ", params[i]);
  }
  return fmt::format("set by param{} {}: {} {} with {}", params.size() == 1 ? "" : "s", names,
                     raise ? "raise" : "change", params.size() == 1 ? "it" : "them", flags);
}

}  // namespace qpcheck::lang
