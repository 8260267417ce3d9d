#include "checker/symbolic/engine.h"

#include <chrono>
#include <memory>
#include <ostream>

#include <fmt/format.h>
#include <z3++.h>

#include "checker/explore/explorer.h"
#include "checker/model/eval.h"
#include "checker/symbolic/encode.h"
#include "checker/symbolic/family.h"
#include "checker/symbolic/interrupt_watch.h"

namespace qpcheck::symbolic {

namespace {

using model::Violation;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One unrolled state with its action effects and bad-state conditions (built on demand).
struct Frame {
  std::vector<Val> st;
  std::vector<Effect> effects;
  bool encoded = false;
  z3::expr inv_bad, fail, dead, action;
  Frame(z3::context& c) : inv_bad(c), fail(c), dead(c), action(c) {}
};

enum class Answer { kSat, kUnsat, kUnknown };

class Engine {
 public:
  Engine(const Family& fam, const Options& opt, const std::vector<int>& allowed)
      : fam_(fam), opt_(opt), start_(Clock::now()), pidx_(ctx_), member_ok_(ctx_) {
    base_model_ = &fam.members.at(0)->model();
    n_members_ = static_cast<int>(fam.members.size());
    if (n_members_ > 1) {
      pidx_ = ctx_.int_const("param_index");
      aligned_ = align_family(fam);
      for (const auto& [e, values] : aligned_.constants) overrides_.emplace(e, select(values, e->type));
    }
    allowed_ = allowed;
    if (allowed_.empty()) for (int i = 0; i < n_members_; ++i) allowed_.push_back(i);
    enc_ = std::make_unique<Encoder>(ctx_, *base_model_, n_members_ > 1 ? &overrides_ : nullptr);
    actions_ = &enc_->actions();
    bool canonical = true;
    for (const model::ModelSystem* m : fam.members) canonical = canonical && enc_->queues_canonical(m->model().initial);
    enc_->assume_canonical_queues(canonical);
    if (actions_->size() != fam.members[0]->action_count()) {
      throw EncodingMismatch(fmt::format("symbolic: {} actions, the transition system has {}", actions_->size(),
                                         fam.members[0]->action_count()));
    }
    member_ok_ = members_expr(allowed_);
    if (opt.smt_timeout > 0) params_.set("timeout", static_cast<unsigned>(std::max(1.0, opt.smt_timeout * 1000)));
    if (opt.smt_rlimit > 0) params_.set("rlimit", static_cast<unsigned>(opt.smt_rlimit));
    for (z3::solver* s : {&base_, &step_}) {
      s->set(params_);
      if (n_members_ > 1) add(*s, member_ok_);
    }
  }

  Result run() {
    Result r;
    r.remaining = allowed_;
    std::string name = opt_.mode == Mode::kBmc ? "bmc" : "kind";
    for (int k = 0; k <= opt_.depth; ++k) {
      Clock::time_point t0 = Clock::now();
      if (opt_.interrupted()) return interrupted(r, k);
      // Base: a counterexample of length exactly k from an initial state?
      if (!bmc_done(k)) {
        Answer a = bmc(k, r);
        if (a == Answer::kSat) return finish(r, k);
        if (a == Answer::kUnknown) return unknown(r, name, k, "base case", base_.reason_unknown());
      }
      r.depth = k;
      std::string step_note;
      if (opt_.mode == Mode::kKind) {
        Answer a = step(k, r);
        if (a == Answer::kUnknown) return unknown(r, name, k, "induction step", step_.reason_unknown());
        if (a == Answer::kUnsat) {
          // Every state of every path of length <= k satisfies the properties (including no failing step from the
          // k-th state: the length-(k+1) check), and k good states are always followed by a good one.
          Answer b = bmc(k + 1, r);
          if (b == Answer::kSat) return finish(r, k + 1);
          if (b == Answer::kUnknown) return unknown(r, name, k + 1, "base case", base_.reason_unknown());
          r.result.outcome = model::Outcome::kHolds;
          r.induction_k = k;
          r.reason = fmt::format("proved by k-induction with k={}{}", k, opt_.simple_path ? " (simple paths)" : "");
          progress(k, fmt::format("k={}: induction step holds: proved ({:.2f} s)", k, since(t0)), r);
          return done(r);
        }
        step_note = fmt::format("; induction step fails (counterexample to induction of {} steps)", k + 1);
      }
      progress(k, fmt::format("no counterexample of length {}{} ({:.2f} s)", k, step_note, since(t0)), r);
    }
    r.result.outcome = model::Outcome::kInconclusive;
    r.result.limit = fmt::format("no violation up to depth {}", opt_.depth);
    r.reason = opt_.mode == Mode::kKind
                   ? fmt::format("no violation up to depth {}; the induction step still fails at k={}", opt_.depth,
                                 opt_.depth)
                   : fmt::format("no violation up to depth {} (bounded model checking proves nothing beyond it)",
                                 opt_.depth);
    return done(r);
  }

 private:
  // ------------------------------------------------------------------ the family's parameter index
  z3::expr members_expr(const std::vector<int>& ms) {
    if (n_members_ <= 1) return ctx_.bool_val(true);
    z3::expr_vector v(ctx_);
    for (int m : ms) v.push_back(pidx_ == ctx_.int_val(m));
    return v.empty() ? ctx_.bool_val(false) : z3::mk_or(v);
  }
  Val select(const std::vector<int64_t>& values, const model::Type* t) {
    bool is_bool = t != nullptr && t->kind == model::TypeKind::kBool;
    auto num = [&](int64_t v) { return is_bool ? ctx_.bool_val(v != 0) : ctx_.int_val(v); };
    z3::expr e = num(values.back());
    int64_t lo = values.back(), hi = values.back();
    for (size_t k = values.size() - 1; k-- > 0;) {
      e = z3::ite(pidx_ == ctx_.int_val(static_cast<int64_t>(k)), num(values[k]), e);
      lo = std::min(lo, values[k]);
      hi = std::max(hi, values[k]);
    }
    return Val{e, lo, hi};
  }

  // ------------------------------------------------------------------ unrolling
  Frame& frame(std::vector<Frame>& frames, size_t i, bool from_init, const std::string& prefix, z3::solver& s) {
    while (frames.size() <= i) {
      Frame f(ctx_);
      size_t k = frames.size();
      if (k == 0 && from_init) {
        f.st = enc_->initial_state();
        for (const auto& [slot, values] : aligned_.initial) f.st[slot] = select(values, base_model_->slots[slot].type);
      } else {
        f.st = enc_->fresh_state(fmt::format("{}{}", prefix, k));
        add(s, from_init ? enc_->in_range(f.st) : enc_->well_formed(f.st));
      }
      f.action = ctx_.int_const(fmt::format("{}{}.action", prefix, k).c_str());
      // Bounds at the top level: the finite-domain solver needs them to bit-blast the variable.
      add(s, f.action >= 0 && f.action < ctx_.int_val(static_cast<int64_t>(actions_->size())));
      frames.push_back(std::move(f));
    }
    return frames[i];
  }

  void encode(Frame& f) {
    if (f.encoded) return;
    f.encoded = true;
    z3::expr none_enabled = ctx_.bool_val(true);
    f.fail = ctx_.bool_val(false);
    for (const ActionRef& a : *actions_) {
      f.effects.push_back(enc_->action(f.st, a));
      Effect& e = f.effects.back();
      z3::expr fails = e.failed;
      if (!opt_.properties.empty()) {
        fails = ctx_.bool_val(false);
        for (const std::string& p : opt_.properties) {
          auto it = e.failed_by.find(p);
          if (it != e.failed_by.end()) fails = enc_->bor(fails, it->second);
        }
      }
      f.fail = enc_->bor(f.fail, fails);
      none_enabled = enc_->band(none_enabled, enc_->bnot(enc_->bor(e.ok, e.failed)));
    }
    f.inv_bad = ctx_.bool_val(false);
    for (size_t i = 0; i < base_model_->invariants.size(); ++i) {
      if (!opt_.checks(base_model_->invariants[i].name)) continue;
      f.inv_bad = enc_->bor(f.inv_bad, enc_->invariant_violated(f.st, i));
    }
    bool deadlock = opt_.deadlock();
    f.dead = deadlock ? enc_->band(none_enabled, enc_->bnot(enc_->valid_end(f.st))) : ctx_.bool_val(false);
  }

  // The constraint that frames[i] steps to frames[i+1] by a successful action (creates frames[i+1]).
  z3::expr transition(std::vector<Frame>& frames, size_t i, bool from_init, const std::string& prefix, z3::solver& s) {
    encode(frame(frames, i, from_init, prefix, s));
    frame(frames, i + 1, from_init, prefix, s);
    Frame& f = frames[i];
    Frame& g = frames[i + 1];
    size_t n = actions_->size();
    z3::expr_vector parts(ctx_);
    for (size_t id = 0; id < n; ++id) {
      const Effect& e = f.effects[id];
      z3::expr success = enc_->band(e.ok, enc_->bnot(e.failed));
      z3::expr chosen = f.action == ctx_.int_val(static_cast<int64_t>(id));
      if (success.is_false()) parts.push_back(!chosen);
      else if (!success.is_true()) parts.push_back(z3::implies(chosen, success));
    }
    for (size_t slot = 0; slot < g.st.size(); ++slot) {
      z3::expr next = f.st[slot].e;
      for (size_t id = n; id-- > 0;) {
        const Val& w = f.effects[id].next[slot];
        if (z3::eq(w.e, f.st[slot].e)) continue;
        z3::expr we = w.e;
        if (we.is_bool() != next.is_bool()) we = next.is_bool() ? enc_->as_bool(w) : enc_->as_int(w);
        next = z3::ite(f.action == ctx_.int_val(static_cast<int64_t>(id)), we, next);
      }
      parts.push_back(g.st[slot].e == next);
    }
    return z3::mk_and(parts);
  }

  z3::expr bad(Frame& f) {
    encode(f);
    return enc_->bor(enc_->bor(f.inv_bad, f.dead), f.fail);
  }

  bool bmc_done(int k) const { return k < bmc_checked_; }

  // Is there a counterexample of length exactly k? (state k violates an invariant or is a deadlock, or a step from
  // state k-1 fails). Assumes lengths < k were excluded; then keeps the path k steps long.
  Answer bmc(int k, Result& r) {
    if (base_frames_.empty()) frame(base_frames_, 0, true, "s", base_);
    z3::expr q = ctx_.bool_val(false);
    z3::expr tr = ctx_.bool_val(true);
    if (k == 0) {
      Frame& f = base_frames_[0];
      encode(f);
      q = enc_->bor(f.inv_bad, f.dead);
    } else {
      tr = transition(base_frames_, k - 1, true, "s", base_);
      Frame& f = base_frames_[k];
      encode(f);
      // A failing step from state k-1 has no successor: it must not need the transition to state k.
      q = enc_->bor(enc_->band(tr, enc_->bor(f.inv_bad, f.dead)), base_frames_[k - 1].fail);
    }
    z3::expr act = ctx_.bool_const(fmt::format("query{}", k).c_str());
    add(base_, z3::implies(act, q));
    z3::expr_vector assume(ctx_);
    assume.push_back(act);
    z3::check_result c = solve(base_, assume);
    Answer a = c == z3::sat ? Answer::kSat : c == z3::unsat ? Answer::kUnsat : Answer::kUnknown;
    if (a == Answer::kSat) {
      z3::model m = base_.get_model();
      Frame& f = base_frames_[k];
      bool via_state = m.eval(enc_->band(tr, enc_->bor(f.inv_bad, f.dead)), true).is_true();
      extract_counterexample(m, k, via_state, r);
    }
    add(base_, !act);
    if (a == Answer::kUnsat) {
      add(base_, tr);
      bmc_checked_ = k + 1;
    }
    return a;
  }

  // Induction step: k+1 good states in a row (not necessarily reachable) followed by a bad one?
  Answer step(int k, Result& r) {
    while (static_cast<int>(step_frames_.size()) <= k + 1) {
      size_t i = step_frames_.size();
      if (i == 0) {
        frame(step_frames_, 0, false, "t", step_);
        continue;
      }
      add(step_, transition(step_frames_, i - 1, false, "t", step_));
      add(step_, !bad(step_frames_[i - 1]));
      if (opt_.simple_path) {
        for (size_t j = 0; j < i; ++j) add(step_, !enc_->equal(step_frames_[j].st, step_frames_[i].st));
      }
    }
    z3::expr act = ctx_.bool_const(fmt::format("step{}", k).c_str());
    add(step_, z3::implies(act, bad(step_frames_[k + 1])));
    z3::expr_vector assume(ctx_);
    assume.push_back(act);
    z3::check_result c = solve(step_, assume);
    Answer a = c == z3::sat ? Answer::kSat : c == z3::unsat ? Answer::kUnsat : Answer::kUnknown;
    if (a == Answer::kSat) extract_cti(step_.get_model(), k, r);
    add(step_, !act);
    return a;
  }

  // ------------------------------------------------------------------ models back to concrete paths
  int member_of(const z3::model& m) {
    if (n_members_ <= 1) return 0;
    return static_cast<int>(m.eval(pidx_, true).get_numeral_int64());
  }
  std::vector<uint64_t> state_of(const z3::model& m, const Frame& f, model::ModelSystem& sys) {
    std::vector<int64_t> v(f.st.size());
    for (size_t i = 0; i < f.st.size(); ++i) {
      z3::expr x = m.eval(f.st[i].e, true);
      v[i] = x.is_bool() ? (x.is_true() ? 1 : 0) : x.get_numeral_int64();
    }
    std::vector<uint64_t> packed(sys.state_words());
    sys.layout().pack(v, packed.data());
    return packed;
  }
  uint32_t action_of(const z3::model& m, const Frame& f) {
    return static_cast<uint32_t>(m.eval(f.action, true).get_numeral_int64());
  }
  // The first action (in ModelSystem order) that fails (for the checked property) in the model.
  std::optional<uint32_t> failing_action(const z3::model& m, const Frame& f) {
    for (size_t id = 0; id < f.effects.size(); ++id) {
      const Effect& e = f.effects[id];
      if (opt_.properties.empty()) {
        if (m.eval(e.failed, true).is_true()) return static_cast<uint32_t>(id);
        continue;
      }
      for (const std::string& p : opt_.properties) {
        auto it = e.failed_by.find(p);
        if (it != e.failed_by.end() && m.eval(it->second, true).is_true()) return static_cast<uint32_t>(id);
      }
    }
    return std::nullopt;
  }

  // Re-runs `actions` from `first` concretely. `failing`: the last action must fail. Returns the concrete path and
  // the violation found at its end, or throws EncodingMismatch.
  std::pair<model::Path, std::optional<Violation>> replay(model::ModelSystem& sys, std::vector<uint64_t> first,
                                                          const std::vector<uint32_t>& actions, bool failing) {
    model::Path p;
    p.states.push_back(std::move(first));
    for (size_t i = 0; i < actions.size(); ++i) {
      model::ActionOutcome cap = model::successor_of(sys, p.states.back().data(), actions[i]);
      p.actions.push_back(actions[i]);
      bool last = i + 1 == actions.size();
      if (cap.failure) {
        if (last && failing && opt_.checks(cap.failure->property)) {
          return {p, cap.failure};
        }
        throw EncodingMismatch(fmt::format("symbolic counterexample disagrees with the explicit semantics: step {} "
                                           "(action {}) fails concretely ({})", i + 1, actions[i], cap.failure->message));
      }
      if (!cap.next) {
        throw EncodingMismatch(fmt::format("symbolic counterexample disagrees with the explicit semantics: step {} "
                                           "(action {}) is not enabled concretely", i + 1, actions[i]));
      }
      if (last && failing) {
        throw EncodingMismatch(fmt::format("symbolic counterexample disagrees with the explicit semantics: the last "
                                           "step (action {}) succeeds concretely", actions[i]));
      }
      p.states.push_back(std::move(*cap.next));
    }
    return {p, std::nullopt};
  }

  // The violation of the last state of `p` (invariant or deadlock), concretely.
  std::optional<Violation> state_violation(model::ModelSystem& sys, const std::vector<uint64_t>& s) {
    const model::Model& m = sys.model();
    if (opt_.properties.empty()) {
      if (auto v = sys.check_invariants(s.data())) return v;
    } else {
      model::Machine mach(m);
      mach.state = sys.unpack(s.data());
      for (const model::Invariant& inv : m.invariants) {
        if (!opt_.checks(inv.name)) continue;
        try {
          if (!mach.eval(inv.expr)) {
            return model::invariant_false(inv);
          }
        } catch (const model::StepFailure& f) {
          return model::invariant_unevaluable(inv, f);
        }
      }
    }
    bool deadlock = opt_.deadlock();
    if (deadlock) {
      if (model::enabled_count(sys, s.data()) == 0 && !sys.valid_end(s.data())) {
        return model::deadlock();
      }
    }
    return std::nullopt;
  }

  void extract_counterexample(const z3::model& m, int k, bool state_bad, Result& r) {
    int member = member_of(m);
    model::ModelSystem& sys = *fam_.members.at(member);
    std::vector<uint32_t> acts;
    for (int i = 0; i + 1 < k; ++i) acts.push_back(action_of(m, base_frames_[i]));
    std::optional<uint32_t> fail_id;
    if (k > 0) fail_id = failing_action(m, base_frames_[k - 1]);
    std::vector<uint64_t> first = sys.initial_states().at(0);
    if (!state_bad && fail_id) {
      acts.push_back(*fail_id);
      auto [path, v] = replay(sys, first, acts, true);
      set_violation(r, member, std::move(path), *v);
      return;
    }
    if (k > 0) acts.push_back(action_of(m, base_frames_[k - 1]));
    auto [path, none] = replay(sys, first, acts, false);
    std::optional<Violation> v = state_violation(sys, path.states.back());
    if (!v) {
      throw EncodingMismatch(fmt::format("symbolic counterexample disagrees with the explicit semantics: state {} "
                                         "violates nothing concretely", k));
    }
    set_violation(r, member, std::move(path), *v);
  }

  void set_violation(Result& r, int member, model::Path path, const Violation& v) {
    r.result.outcome = model::Outcome::kViolated;
    r.result.violation = v;
    r.result.path = std::move(path);
    r.result.shortest = true;  // every shorter length was refuted by the solver
    r.member = member;
  }

  void extract_cti(const z3::model& m, int k, Result& r) {
    int member = member_of(m);
    model::ModelSystem& sys = *fam_.members.at(member);
    std::vector<uint32_t> acts;
    for (int i = 0; i <= k; ++i) acts.push_back(action_of(m, step_frames_[i]));
    std::vector<uint64_t> first = state_of(m, step_frames_[0], sys);
    Frame& last = step_frames_[k + 1];
    bool state_bad = m.eval(enc_->bor(last.inv_bad, last.dead), true).is_true();
    std::optional<uint32_t> fail_id = failing_action(m, last);
    if (!state_bad && fail_id) acts.push_back(*fail_id);
    auto [path, v] = replay(sys, first, acts, !state_bad && fail_id.has_value());
    if (!v) v = state_violation(sys, path.states.back());
    if (!v) throw EncodingMismatch("symbolic counterexample to induction disagrees with the explicit semantics");
    r.cti_violation = v;
    r.cti = std::move(path);
    r.cti_member = member;
  }

  // ------------------------------------------------------------------ outcomes
  Result finish(Result& r, int k) {
    r.depth = k;
    progress(k, fmt::format("counterexample of length {}", k), r);
    return done(r);
  }
  Result unknown(Result& r, const std::string& name, int k, const char* what, const std::string& why) {
    if (opt_.interrupted()) return interrupted(r, k);  // the watcher cancelled the call
    r.result.outcome = model::Outcome::kInconclusive;
    std::string limits;
    if (opt_.smt_timeout > 0) limits += fmt::format("--smt-timeout {}", opt_.smt_timeout);
    if (opt_.smt_rlimit > 0) limits += fmt::format("{}--smt-rlimit {}", limits.empty() ? "" : ", ", opt_.smt_rlimit);
    r.result.limit = fmt::format("solver returned unknown at depth {} ({}): {}{}", k, what, why,
                                 limits.empty() ? "" : fmt::format(" (per-call limits: {})", limits));
    r.reason = r.result.limit;
    progress(k, fmt::format("{}: unknown ({})", what, why), r);
    return done(r);
  }
  // Stopped by Options::interrupt before depth k was decided: what is known is that no counterexample is shorter.
  Result interrupted(Result& r, int k) {
    r.result.outcome = model::Outcome::kInconclusive;
    r.result.limit = fmt::format("interrupted (SIGINT or SIGTERM) at depth {}: {}{}", k,
                                 k == 0 ? "nothing decided yet" : fmt::format("no counterexample of length < {}", k),
                                 opt_.mode == Mode::kKind ? "; the induction step was not proved" : "");
    r.reason = r.result.limit;
    progress(k, "interrupted", r);
    return done(r);
  }
  Result done(Result& r) {
    r.result.stats.depth = static_cast<uint64_t>(r.depth);
    r.result.stats.seconds = since(start_);
    r.result.stats.peak_rss_bytes = explore::peak_rss_bytes();
    return r;
  }
  void progress(int depth, std::string event, const Result& r) {
    if (!opt_.progress) return;
    Progress p;
    p.engine = opt_.mode == Mode::kBmc ? "bmc" : "kind";
    p.depth = depth;
    p.max_depth = opt_.depth;
    p.seconds = since(start_);
    p.undecided = static_cast<int>(r.remaining.size());
    p.members = n_members_;
    p.event = std::move(event);
    opt_.progress(p);
  }
  void notice(const std::string& line) {
    if (opt_.notices != nullptr) *opt_.notices << line << "\n" << std::flush;
  }

  // Checks; when the finite-domain solver gives up on a term it cannot bit-blast (division or multiplication of two
  // variables), moves every assertion to Z3's general solver for the rest of the run and checks again.
  z3::check_result solve(z3::solver& s, const z3::expr_vector& assume) {
    z3::check_result c = s.check(assume);
    if (c != z3::unknown || s.reason_unknown().find("giveup") == std::string::npos) return c;
    z3::solver general(ctx_);
    general.set(params_);
    for (const z3::expr& a : log(s)) general.add(a);
    s = general;
    notice("qpcheck: note: the finite-domain solver gave up (non-linear arithmetic?); continuing with Z3's general "
           "solver");
    return s.check(assume);
  }

  // Every assertion is logged, so that a solver can be replaced (see solve).
  z3::expr_vector& log(const z3::solver& s) { return &s == &base_ ? base_log_ : step_log_; }
  void add(z3::solver& s, const z3::expr& e) {
    s.add(e);
    log(s).push_back(e);
  }

  z3::solver make_solver() {
    // Every state variable is a bounded integer or a Boolean: Z3's finite-domain solver (bit-blasting into its
    // incremental SAT core) is two orders of magnitude faster here than the general arithmetic solver (philosophers
    // N=4 to depth 14: 0.24 s against 27 s).
    return z3::solver(ctx_, "QF_FD");
  }
  const Family& fam_;
  const Options& opt_;
  Clock::time_point start_;
  z3::context ctx_;
  z3::expr pidx_;
  z3::expr member_ok_;
  z3::params params_{ctx_};
  z3::expr_vector base_log_{ctx_}, step_log_{ctx_};
  z3::solver base_{make_solver()};
  z3::solver step_{make_solver()};
  const model::Model* base_model_ = nullptr;
  int n_members_ = 1;
  std::vector<int> allowed_;
  Aligned aligned_;
  ConstOverrides overrides_;
  std::unique_ptr<Encoder> enc_;
  const std::vector<ActionRef>* actions_ = nullptr;
  std::vector<Frame> base_frames_, step_frames_;
  int bmc_checked_ = 0;
  InterruptWatch watch_{ctx_, opt_.interrupt};  // last: stopped and joined before anything else is destroyed
};

}  // namespace

Result check(const Family& family, const Options& options, const std::vector<int>& allowed) {
  return Engine(family, options, allowed).run();
}

}  // namespace qpcheck::symbolic
