#include "checker/lang/typecheck_names.h"

#include <algorithm>

#include <fmt/format.h>

namespace qpcheck::lang {

const char* kind_name(const Symbol& s) {
  switch (s.kind) {
    case Symbol::Kind::kConst: return s.is_param ? "parameter" : "constant";
    case Symbol::Kind::kFamily: return "enum constant family";
    case Symbol::Kind::kType: return "type";
    case Symbol::Kind::kVar: return "variable";
    case Symbol::Kind::kFn: return "function";
    case Symbol::Kind::kProc: return "procedure";
    case Symbol::Kind::kProcess: return "process";
    case Symbol::Kind::kRetired: return "retired name";
  }
  return "name";
}

void Names::index(const Program& program, const ImportGraph& graph) {
  graph_ = &graph;
  for (const Decl* d : program.decls) {
    int f = d->span.file;
    const std::string& n = d->name.name;
    switch (d->kind) {
      case DeclKind::kParam: kind_files_[{"param", n}].insert(f); break;
      case DeclKind::kType:
        if (!d->is_override) {
          std::vector<int>& files = type_files_[n];
          if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
        }
        break;
      case DeclKind::kVar: kind_files_[{"var", n}].insert(f); break;
      case DeclKind::kProcess: kind_files_[{"process", n}].insert(f); break;
      case DeclKind::kProc:
        if (!d->is_override) kind_files_[{"proc", n}].insert(f);
        break;
      default: break;
    }
  }
}

void Names::define(const Ident& id, Symbol sym) {
  std::map<int, Symbol>& by_file = globals_[id.name];
  if (auto it = by_file.find(current_file_); it != by_file.end()) {
    error(id.span, fmt::format("duplicate declaration of '{}' (first declared at {})", id.name,
                               where(it->second.span)));
  }
  if (sym.kind != Symbol::Kind::kRetired) {
    for (const auto& [f, other] : by_file) {
      if (f == current_file_ || !graph_->sees(current_file_, f) || other.kind == Symbol::Kind::kRetired) continue;
      warn_(id.span, fmt::format("'{}' shadows the {} '{}' of module {} ({}): in this file '{}' is this {}, while "
                                 "{}'s own uses keep meaning its {}; write {}::{} to use that one here", id.name,
                                 kind_name(other), id.name, graph_->module_name(f), where(other.span), id.name,
                                 kind_name(sym), graph_->module_name(f), kind_name(other), graph_->module_name(f),
                                 id.name));
      break;
    }
  }
  sym.span = id.span;
  sym.file = current_file_;
  by_file.emplace(current_file_, sym);
}

bool Names::declared_here(const std::string& name) const {
  auto it = globals_.find(name);
  return it != globals_.end() && it->second.count(current_file_);
}

Symbol* Names::lookup(const Ident& id) {
  auto it = globals_.find(id.name);
  if (it == globals_.end()) {
    if (!id.module.empty()) graph_->module_file(id);  // an unknown module is reported as such
    return nullptr;
  }
  std::vector<int> files;
  for (const auto& [f, sym] : it->second) files.push_back(f);
  int f = graph_->resolve(id, current_file_, files, [&](int file) { return where(it->second.at(file).span); });
  if (f < 0) return nullptr;
  Symbol& s = it->second.at(f);
  if (s.kind == Symbol::Kind::kRetired) {
    error(id.span, fmt::format("'{}' is retired (at {}): {}", id.name, where(s.span), s.message));
  }
  return &s;
}

Symbol* Names::lookup_imported(const Ident& id, const char* what) {
  if (id.module.empty() && declared_here(id.name)) {
    error(id.span, fmt::format("'override {}' replaces a declaration of an imported file, but '{}' is declared in "
                               "this file (at {}): change that declaration instead", what, id.name,
                               where(here(id.name).span)));
  }
  auto it = globals_.find(id.name);
  std::vector<int> files;
  if (it != globals_.end()) {
    for (const auto& [f, sym] : it->second) {
      if (f != current_file_) files.push_back(f);
    }
  }
  int f = files.empty() ? -1 : graph_->resolve(id, current_file_, files,
                                               [&](int file) { return where(it->second.at(file).span); });
  if (f < 0 || f == current_file_) {
    error(id.span, fmt::format("override {} '{}': no {} '{}' in the files this one imports", what, qualified(id),
                               what, id.name));
  }
  Symbol& sym = it->second.at(f);
  if (sym.kind == Symbol::Kind::kRetired) {
    error(id.span, fmt::format("'{}' is retired (at {}): {}", id.name, where(sym.span), sym.message));
  }
  return &sym;
}

const Symbol* Names::symbol_in(int file, const std::string& name) const {
  auto it = globals_.find(name);
  if (it == globals_.end()) return nullptr;
  auto f = it->second.find(file);
  return f == it->second.end() ? nullptr : &f->second;
}

std::string Names::display(const char* kind, const std::string& name) const {
  auto it = kind_files_.find({kind, name});
  return graph_->display(name, current_file_, it != kind_files_.end() && it->second.size() > 1);
}

const Local* Names::find_local(const std::string& name) const {
  for (size_t i = scopes_.size(); i-- > 0;) {
    auto it = scopes_[i].find(name);
    if (it != scopes_[i].end()) return &it->second;
  }
  return nullptr;
}

void Names::bind_local(const Ident& id, Local l) {
  if (scopes_.empty()) scopes_.emplace_back();
  auto& scope = scopes_.back();
  if (scope.count(id.name)) {
    error(id.span, fmt::format("duplicate declaration of '{}' (first declared at {})", id.name,
                               where(scope[id.name].span)));
  }
  l.span = id.span;
  scope[id.name] = l;
}

}  // namespace qpcheck::lang
