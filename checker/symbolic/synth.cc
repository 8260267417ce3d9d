#include "checker/symbolic/synth.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "checker/lang/properties.h"
#include "checker/model/eval.h"
#include "checker/model/property_subset.h"

namespace qpcheck::symbolic {

using model::Violation;

std::optional<Violation> replays_violation(model::ModelSystem& sys, const model::Path& path,
                                           const std::string& property) {
  std::vector<uint64_t> s = sys.initial_states().at(0);
  model::PropertySubset view(sys, {property});
  for (size_t i = 0; i < path.actions.size(); ++i) {
    model::ActionOutcome cap = model::successor_of(sys, s.data(), path.actions[i]);
    bool last = i + 1 == path.actions.size();
    if (cap.failure) {
      if (last && cap.failure->property == property) return cap.failure;
      return std::nullopt;
    }
    if (!cap.next) return std::nullopt;
    s = *cap.next;
  }
  if (auto v = view.check_invariants(s.data())) return v;
  if (property == "deadlock") {
    if (model::enabled_count(sys, s.data()) == 0 && !sys.valid_end(s.data())) {
      return model::deadlock();
    }
  }
  return std::nullopt;
}

std::vector<PropertyResult> synthesize(const Family& family, const SynthOptions& options) {
  std::vector<PropertyResult> results;
  const model::Model& base = family.members.at(0)->model();
  std::vector<std::string> wanted = options.only;
  if (wanted.empty()) {
    for (const model::PropertyChoice& c : base.checks) wanted.push_back(c.name);
  }
  std::vector<std::string> properties;
  // The same properties, in the same order, as every other engine reports them (lang/properties.h).
  for (const lang::PropertyInfo& p : lang::properties_of(base, options.engine.check_deadlock)) {
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), p.name) != wanted.end()) properties.push_back(p.name);
  }
  auto start = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto value_of = [&](int m) {
    std::string v;
    for (const SymbolicParam& p : family.params) v += fmt::format("{}{}={}", v.empty() ? "" : " ", p.name, p.values[m]);
    return v;
  };
  for (size_t pi = 0; pi < properties.size(); ++pi) {
    const std::string& property = properties[pi];
    PropertyResult pr;
    pr.property = property;
    std::vector<int> remaining;
    for (size_t i = 0; i < family.members.size(); ++i) remaining.push_back(static_cast<int>(i));
    SynthProgress sp;
    sp.property = property;
    sp.property_index = static_cast<int>(pi) + 1;
    sp.properties = static_cast<int>(properties.size());
    sp.members = static_cast<int>(family.members.size());
    sp.max_depth = options.engine.depth;
    Options opt = options.engine;
    opt.mode = Mode::kKind;
    opt.properties = {property};
    if (options.progress) {
      opt.progress = [&](const Progress& p) {
        sp.phase = "kind";
        sp.depth = p.depth;
        sp.undecided = static_cast<int>(remaining.size());
        sp.seconds = since();
        options.progress(sp);
      };
    }
    while (!remaining.empty()) {
      Result r = check(family, opt, remaining);
      if (r.result.outcome == model::Outcome::kHolds) {
        Region reg;
        reg.verdict = Region::Verdict::kHolds;
        reg.members = remaining;
        reg.how = fmt::format("k-induction, k={}", r.induction_k);
        pr.regions.push_back(std::move(reg));
        remaining.clear();
        break;
      }
      if (r.result.outcome != model::Outcome::kViolated) break;
      Region reg;
      reg.verdict = Region::Verdict::kFails;
      reg.how = fmt::format("bmc, shortest counterexample: {} steps", r.result.path.actions.size());
      reg.counterexample = r.result;
      reg.counterexample_member = r.member;
      std::vector<int> rest;
      for (int m : remaining) {
        if (m == r.member || replays_violation(*family.members[m], r.result.path, property)) reg.members.push_back(m);
        else rest.push_back(m);
      }
      remaining = std::move(rest);
      pr.regions.push_back(std::move(reg));
    }
    // What neither BMC nor k-induction decided: an exhaustive explicit search of each value, for this property.
    // After an interrupt every undecided value stays open, saying so (and the properties after it too).
    Region open;
    open.verdict = Region::Verdict::kOpen;
    open.how = opt.interrupted() ? "interrupted (SIGINT or SIGTERM)" : fmt::format("no violation up to depth {}", opt.depth);
    std::vector<Region> explicit_regions;
    int left = static_cast<int>(remaining.size());
    for (int m : remaining) {
      if (options.explicit_max_states == 0 || opt.interrupted()) {
        open.members.push_back(m);
        continue;
      }
      model::PropertySubset view(*family.members[m], {property});
      explore::Options eo;
      eo.check_deadlock = property == "deadlock";
      eo.limits.max_states = options.explicit_max_states;
      eo.interrupt = opt.interrupt;
      if (options.progress) {
        sp.phase = "explicit";
        sp.value = value_of(m);
        sp.undecided = left;
        sp.states = 0;
        sp.seconds = since();
        options.progress(sp);
        eo.progress = [&](const model::SearchStats& st) {
          sp.states = st.states;
          sp.seconds = since();
          options.progress(sp);
        };
      }
      model::CheckResult ex = explore::explore(view, eo);
      --left;
      if (ex.outcome == model::Outcome::kHolds) {
        // One region for every value proved this way; `how` lists the states searched per value.
        auto it = std::find_if(explicit_regions.begin(), explicit_regions.end(),
                               [](const Region& x) { return x.verdict == Region::Verdict::kHolds; });
        if (it == explicit_regions.end()) {
          explicit_regions.push_back(Region{Region::Verdict::kHolds, {m}, "explicit exhaustive search per value, "
                                            + std::to_string(ex.stats.states), {}, 0});
        } else {
          it->members.push_back(m);
          it->how += ", " + std::to_string(ex.stats.states);
        }
      } else if (ex.outcome == model::Outcome::kViolated) {
        explicit_regions.push_back(Region{Region::Verdict::kFails, {m},
                                          fmt::format("explicit BFS, counterexample of {} steps (beyond depth {})",
                                                      ex.path.actions.size(), opt.depth),
                                          ex, m});
      } else {
        if (ex.limit == "interrupted") open.how = "interrupted (SIGINT or SIGTERM)";
        open.members.push_back(m);
      }
    }
    for (Region& reg : explicit_regions) {
      if (reg.verdict == Region::Verdict::kHolds) reg.how += " states";
      pr.regions.push_back(std::move(reg));
    }
    if (!open.members.empty()) pr.regions.push_back(std::move(open));
    results.push_back(std::move(pr));
  }
  return results;
}

}  // namespace qpcheck::symbolic
