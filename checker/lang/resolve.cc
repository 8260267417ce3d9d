#include "checker/lang/resolve.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

namespace qpcheck::lang {

ImportGraph::ImportGraph(const Program& program, const SourceManager& sources) : main_(program.main_file) {
  int n = sources.size();
  names_.resize(n);
  for (int f = 0; f < n; ++f) names_[f] = std::filesystem::path(sources.file(f).path).stem().string();
  imported_.assign(n, {});
  sees_.assign(n, std::vector<bool>(n, false));
  for (int f = 0; f < n; ++f) {
    // Depth-first from f over the import edges: every file reached, in the order imports are written.
    std::vector<int> stack = {f};
    sees_[f][f] = true;
    std::vector<int> order;
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      if (x != f) order.push_back(x);
      if (static_cast<size_t>(x) >= program.imports.size()) continue;
      const std::vector<int>& next = program.imports[x];
      for (auto it = next.rbegin(); it != next.rend(); ++it) {
        if (!sees_[f][*it]) {
          sees_[f][*it] = true;
          stack.push_back(*it);
        }
      }
    }
    imported_[f] = std::move(order);
  }
}

bool ImportGraph::sees(int from, int file) const {
  return from >= 0 && file >= 0 && static_cast<size_t>(from) < sees_.size() && sees_[from][file];
}

int ImportGraph::module_file(const Ident& id) const {
  std::vector<int> files;
  for (size_t f = 0; f < names_.size(); ++f) {
    if (names_[f] == id.module) files.push_back(static_cast<int>(f));
  }
  if (files.empty()) {
    std::string known;
    for (const std::string& n : names_) {
      if (known.find(" " + n + ",") == std::string::npos) known += " " + n + ",";
    }
    if (!known.empty()) known.pop_back();
    throw SpecError(id.span, fmt::format("no module '{}' in '{}::{}' (a module is a loaded file, named by its stem; "
                                         "loaded:{})", id.module, id.module, id.name, known));
  }
  if (files.size() > 1) {
    throw SpecError(id.span, fmt::format("module name '{}' is ambiguous: {} loaded files have that stem; rename one "
                                         "of them", id.module, files.size()));
  }
  return files[0];
}

std::vector<int> ImportGraph::candidates(int from, const std::vector<int>& declared_in) const {
  if (std::find(declared_in.begin(), declared_in.end(), from) != declared_in.end()) return {from};
  std::vector<int> visible;
  for (int f : declared_in) {
    if (f != from && sees(from, f)) visible.push_back(f);
  }
  std::vector<int> out;
  for (int f : visible) {
    bool shadowed = false;
    for (int g : visible) shadowed = shadowed || (g != f && sees(g, f) && !sees(f, g));
    if (!shadowed) out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ImportGraph::ambiguity(const std::string& name, const std::vector<int>& files,
                                   const std::function<std::string(int file)>& where) const {
  std::string list;
  for (size_t i = 0; i < files.size(); ++i) {
    list += fmt::format("{}{} (write {}::{})", i == 0 ? "" : i + 1 == files.size() ? " and " : ", ", where(files[i]),
                        names_[files[i]], name);
  }
  return fmt::format("'{}' is ambiguous here: it is declared at {}, and neither of those files imports the other",
                     name, list);
}

int ImportGraph::resolve(const Ident& id, int from, const std::vector<int>& declared_in,
                         const std::function<std::string(int file)>& where) const {
  int start = id.module.empty() ? from : module_file(id);
  std::vector<int> c = candidates(start, declared_in);
  if (c.size() > 1) throw SpecError(id.span, ambiguity(id.name, c, where));
  return c.empty() ? -1 : c[0];
}

int ImportGraph::resolve_usage(const std::string& module, const std::string& name, int from,
                               const std::vector<int>& declared_in,
                               const std::function<std::string(int file)>& where) const {
  int start = from;
  if (!module.empty()) {
    try {
      start = module_file(Ident{name, {}, module});
    } catch (const SpecError& e) {
      throw UsageError(e.diagnostics().front().message);
    }
  }
  std::vector<int> c = candidates(start, declared_in);
  if (c.size() > 1) throw UsageError(ambiguity(name, c, where));
  return c.empty() ? -1 : c[0];
}

std::string ImportGraph::display(const std::string& name, int file, bool collides) const {
  if (!collides || file == main_ || file < 0) return name;
  return names_.at(file) + "::" + name;
}

std::pair<std::string, std::string> split_qualified(const std::string& text) {
  size_t p = text.find("::");
  if (p == std::string::npos) return {"", text};
  return {text.substr(0, p), text.substr(p + 2)};
}

}  // namespace qpcheck::lang
