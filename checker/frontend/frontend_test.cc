#include "checker/frontend/frontend.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <unistd.h>

#include "checker/lang/typecheck.h"
#include "verbs_backend/replay_ops.h"

namespace qpcheck::frontend {
namespace {

namespace fs = std::filesystem;

// A scratch folder of spec files, removed at the end of the test.
struct Files {
  fs::path dir;
  Files() {
    dir = fs::temp_directory_path() / ("frontend_test_" + std::to_string(::getpid()));
    fs::create_directories(dir / "lib");
  }
  ~Files() { fs::remove_all(dir); }
  std::string add(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

TEST_CASE("frontend: a spec read from text compiles per set of overrides, and failures render with file:line:col") {
  Spec spec;
  spec.read_text("t.qpspec", "param n: 1..3 = 1;\nvar x: 0..3;\nprocess p { x = n; }\n");
  lang::Compiled a = spec.compile();
  lang::Compiled b = spec.compile({{"n", "3"}});
  REQUIRE(a.model != nullptr);
  REQUIRE(b.model != nullptr);
  CHECK(a.model->params.size() == 1);
  CHECK(b.param_targets == std::vector<std::string>{"n"});

  std::optional<Failure> usage = spec.attempt([&] { spec.compile({{"m", "1"}}); });
  REQUIRE(usage);
  CHECK(usage->kind == Failure::Kind::kUsage);
  CHECK(usage->text == "qpcheck: error: unknown parameter 'm' in --param m=1 (the spec declares: n)\n");

  Spec bad;
  std::optional<Failure> f = bad.attempt([&] { bad.read_text("bad.qpspec", "var x: 0..3;\nprocess p { x = ; }\n"); });
  REQUIRE(f);
  CHECK(f->kind == Failure::Kind::kSpec);
  CHECK(f->text.rfind("bad.qpspec:2:17: error: ", 0) == 0);
  CHECK(f->text.find("process p { x = ; }") != std::string::npos);  // the source line, then a caret
  CHECK(!spec.attempt([] {}));
}

TEST_CASE("frontend: a spec read from disk lists its imports, and an error in an import renders against that file") {
  Files files;
  files.add("lib/net.qpspec", "var y: 0..1;\n");
  std::string main = files.add("main.qpspec", "import \"lib/net.qpspec\";\nvar x: 0..3;\nprocess p { x = 1; }\n");
  Spec spec;
  REQUIRE(!spec.attempt([&] { spec.read(main, {}); }));
  std::vector<std::string> read = spec.files();
  REQUIRE(read.size() == 2);
  CHECK(read[0] == main);
  CHECK(fs::path(read[1]).filename() == "net.qpspec");
  CHECK(!spec.attempt([&] { spec.compile(); }));

  files.add("lib/broken.qpspec", "var y: 0..1\n");
  std::string uses = files.add("uses.qpspec", "import \"lib/broken.qpspec\";\nvar x: 0..3;\n");
  Spec broken;
  std::optional<Failure> f = broken.attempt([&] { broken.read(uses, {}); });
  REQUIRE(f);
  CHECK(f->kind == Failure::Kind::kSpec);
  CHECK(f->text.find("broken.qpspec:1:12: error: expected ';' after variable declaration") != std::string::npos);

  Spec missing;
  std::optional<Failure> m = missing.attempt([&] { missing.read((files.dir / "nope.qpspec").string(), {}); });
  REQUIRE(m);
  CHECK(m->kind == Failure::Kind::kUsage);
}

TEST_CASE("frontend: --param strings split at the first '=' and a malformed one is a usage error naming it") {
  CHECK(parse_param_assignments({"a=1", "rdma::b=x=y"}) ==
        lang::ParamOverrides{{"a", "1"}, {"rdma::b", "x=y"}});
  CHECK_THROWS_WITH_AS(parse_param_assignments({"a=1", "b"}), "--param b: expected NAME=VALUE", lang::UsageError);
  CHECK_THROWS_WITH_AS(parse_param_assignments({"=3"}), "--param =3: expected NAME=VALUE", lang::UsageError);
}

// The rendered value of the param `target` in a compilation, or "" when it has none.
std::string rendered(const lang::Compiled& c, const std::string& target) {
  for (const auto& [name, value] : c.model->params) {
    if (name == target) return value;
  }
  return "";
}

// What a compilation with one override makes of it: the param it set and that param's value, or the usage error.
template <typename Check>
std::pair<std::string, std::string> resolved(Check check, const Spec& spec, const std::string& param,
                                             const std::string& value) {
  try {
    lang::Compiled c = check(spec.program(), spec.sources(), lang::ParamOverrides{{param, value}},
                             verbs::replay_vocabulary());
    return {c.param_targets.at(0), rendered(c, c.param_targets.at(0))};
  } catch (const lang::UsageError& e) {
    return {"usage error", e.what()};
  }
}

TEST_CASE("frontend: a matrix value resolves the same with the params-only check as with the whole check") {
  // resolve_matrix renders each value with lang::typecheck_params; over every shipped spec's matrix, and values
  // a matrix may get wrong (out of range, not a constant of the type, an unknown or qualified name), both checks
  // must give the same param, rendering and error.
  int compared = 0;
  for (const auto& entry : fs::directory_iterator("spec")) {
    if (entry.path().extension() != ".qpspec") continue;
    Spec spec;
    spec.read(entry.path().string(), lang::default_search_path({}));
    for (const lang::Decl* d : spec.program().decls) {
      if (d->kind != lang::DeclKind::kMatrix || d->span.file != spec.program().main_file) continue;
      for (const lang::ParamValues& pv : d->values) {
        const std::string name = pv.param.module.empty() ? pv.param.name : pv.param.module + "::" + pv.param.name;
        std::vector<std::string> values;
        for (const lang::Ident& v : pv.values) values.push_back(v.name);
        for (const std::string bad : {"99", "-1", "NO_SUCH_VALUE", "true"}) values.push_back(bad);
        for (const std::string& v : values) {
          INFO(entry.path().string(), ": ", name, " = ", v);
          CHECK(resolved(lang::typecheck_params, spec, name, v) == resolved(lang::typecheck, spec, name, v));
          ++compared;
        }
      }
    }
  }
  CHECK(compared > 100);
  Spec spec;
  spec.read("spec/01_linux_today.qpspec", lang::default_search_path({}));
  CHECK(resolved(lang::typecheck_params, spec, "no_such_param", "1") ==
        std::pair<std::string, std::string>{"usage error", resolved(lang::typecheck, spec, "no_such_param", "1").second});
  CHECK(resolved(lang::typecheck_params, spec, "rdma::transport", "IWARP") ==
        std::pair<std::string, std::string>{"transport", "IWARP"});
}

}  // namespace
}  // namespace qpcheck::frontend
