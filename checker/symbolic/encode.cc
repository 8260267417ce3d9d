#include "checker/symbolic/encode.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace qpcheck::symbolic {

using model::Op;
using model::SOp;
using model::Type;
using model::TypeKind;

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t clamp128(__int128 v) {
  if (v < kMin) return kMin;
  if (v > kMax) return kMax;
  return static_cast<int64_t>(v);
}
}  // namespace

std::vector<ActionRef> enumerate_actions(const model::Model& m) {
  std::vector<ActionRef> out;
  for (size_t p = 0; p < m.processes.size(); ++p) {
    const model::ProcessInstance& pi = m.processes[p];
    for (size_t pc = 0; pc < pi.edges.size(); ++pc) {
      for (size_t e = 0; e < pi.edges[pc].size(); ++e) {
        out.push_back(ActionRef{static_cast<int>(p), static_cast<int>(pc), static_cast<int>(e), -1, 0});
      }
    }
  }
  for (size_t r = 0; r < m.rules.size(); ++r) {
    for (int64_t t = 0; t < m.rules[r].instances; ++t) out.push_back(ActionRef{-1, 0, 0, static_cast<int>(r), t});
  }
  return out;
}

Encoder::Encoder(z3::context& ctx, const model::Model& m, const ConstOverrides* overrides)
    : ctx_(ctx), m_(m), overrides_(overrides), actions_(enumerate_actions(m)) {
  for (const model::SlotInfo& s : m.slots) {
    bool_slot_.push_back(s.type != nullptr && s.type->kind == TypeKind::kBool);
    default_.push_back(s.lo);
  }
}

// ------------------------------------------------------------------------------------------------ folding helpers

z3::expr Encoder::band(const z3::expr& a, const z3::expr& b) {
  if (a.is_false() || b.is_true()) return a;
  if (b.is_false() || a.is_true()) return b;
  if (z3::eq(a, b)) return a;
  return a && b;
}
z3::expr Encoder::bor(const z3::expr& a, const z3::expr& b) {
  if (a.is_true() || b.is_false()) return a;
  if (b.is_true() || a.is_false()) return b;
  if (z3::eq(a, b)) return a;
  return a || b;
}
z3::expr Encoder::bnot(const z3::expr& a) {
  if (a.is_true()) return F();
  if (a.is_false()) return T();
  return !a;
}
z3::expr Encoder::as_int(const Val& v) {
  if (!v.e.is_bool()) return v.e;
  if (v.e.is_true()) return ctx_.int_val(1);
  if (v.e.is_false()) return ctx_.int_val(0);
  return z3::ite(v.e, ctx_.int_val(1), ctx_.int_val(0));
}
z3::expr Encoder::as_bool(const Val& v) {
  if (v.e.is_bool()) return v.e;
  if (v.lo == v.hi) return ctx_.bool_val(v.lo != 0);
  return v.e != 0;
}

Val Encoder::num(int64_t v, const Type* t) {
  if (t != nullptr && t->kind == TypeKind::kBool) return Val{ctx_.bool_val(v != 0), v != 0, v != 0};
  return Val{ctx_.int_val(v), v, v};
}

Val Encoder::ite(const z3::expr& c, const Val& a, const Val& b) {
  if (c.is_true()) return a;
  if (c.is_false()) return b;
  if (z3::eq(a.e, b.e)) return a;
  if (a.e.is_bool() != b.e.is_bool()) {
    return Val{z3::ite(c, as_int(a), as_int(b)), std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  return Val{z3::ite(c, a.e, b.e), std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

void Encoder::error(Ctx& c, const z3::expr& cond, const std::string& property) {
  z3::expr when = band(band(band(c.ok, c.guard), bnot(c.any_failed)), cond);
  if (when.is_false()) return;
  c.any_failed = bor(c.any_failed, when);
  auto it = c.failed.find(property);
  if (it == c.failed.end()) c.failed.emplace(property, when);
  else it->second = bor(it->second, when);
}

void Encoder::require(Ctx& c, const z3::expr& cond) { c.ok = band(c.ok, bor(c.any_failed, cond)); }

z3::expr Encoder::failed_any(const Ctx& c) {
  z3::expr f = ctx_.bool_val(false);
  for (const auto& [p, cond] : c.failed) f = bor(f, cond);
  return f;
}

// ------------------------------------------------------------------------------------------------ states

std::vector<Val> Encoder::fresh_state(const std::string& prefix) {
  std::vector<Val> s;
  s.reserve(m_.slots.size());
  for (size_t i = 0; i < m_.slots.size(); ++i) {
    std::string name = fmt::format("{}.{}", prefix, i);
    if (m_.slots[i].lo == m_.slots[i].hi) {  // a slot with one value (a process with one control location)
      int64_t v = m_.slots[i].lo;
      s.push_back(bool_slot_[i] ? Val{ctx_.bool_val(v != 0), v, v} : Val{ctx_.int_val(v), v, v});
    } else if (bool_slot_[i]) s.push_back(Val{ctx_.bool_const(name.c_str()), 0, 1});
    else s.push_back(Val{ctx_.int_const(name.c_str()), m_.slots[i].lo, m_.slots[i].hi});
  }
  return s;
}

std::vector<Val> Encoder::initial_state() {
  std::vector<Val> s;
  for (size_t i = 0; i < m_.slots.size(); ++i) {
    int64_t v = m_.initial[i];
    if (bool_slot_[i]) s.push_back(Val{ctx_.bool_val(v != 0), v, v});
    else s.push_back(Val{ctx_.int_val(v), v, v});
  }
  return s;
}

z3::expr Encoder::in_range(const std::vector<Val>& s) {
  z3::expr_vector parts(ctx_);
  for (size_t i = 0; i < s.size(); ++i) {
    if (bool_slot_[i] || s[i].lo == s[i].hi) continue;
    parts.push_back(s[i].e >= ctx_.int_val(m_.slots[i].lo));
    parts.push_back(s[i].e <= ctx_.int_val(m_.slots[i].hi));
  }
  return parts.empty() ? T() : z3::mk_and(parts);
}

z3::expr Encoder::equal(const std::vector<Val>& a, const std::vector<Val>& b) {
  z3::expr_vector parts(ctx_);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!z3::eq(a[i].e, b[i].e)) parts.push_back(a[i].e == b[i].e);
  }
  return parts.empty() ? T() : z3::mk_and(parts);
}

z3::expr Encoder::well_formed(const std::vector<Val>& s) {
  z3::expr_vector parts(ctx_);
  parts.push_back(in_range(s));
  if (!canonical_queues_) return z3::mk_and(parts);
  for (const auto& [qt, q] : queues()) {
    int es = qt->elem->slots;
    for (int j = 0; j < qt->capacity; ++j) {
      z3::expr past = as_int(s[q]) <= ctx_.int_val(j);
      for (int k = 0; k < es; ++k) {
        int64_t slot = q + 1 + j * es + k;
        Val d = bool_slot_[slot] ? Val{ctx_.bool_val(default_[slot] != 0), 0, 0} : Val{ctx_.int_val(default_[slot]), 0, 0};
        parts.push_back(z3::implies(past, s[slot].e == d.e));
      }
    }
  }
  return z3::mk_and(parts);
}

std::vector<std::pair<const Type*, int64_t>> Encoder::queues() const {
  // Every queue is a rendering unit of its own (model.h: a scalar leaf or a whole queue).
  std::vector<std::pair<const Type*, int64_t>> out;
  for (const model::Unit& u : m_.units) {
    if (u.process < 0 && u.type != nullptr && u.type->kind == TypeKind::kQueue) out.emplace_back(u.type, u.first_slot);
  }
  return out;
}

bool Encoder::queues_canonical(const std::vector<int64_t>& values) const {
  for (const auto& [qt, q] : queues()) {
    int es = qt->elem->slots;
    for (int j = static_cast<int>(values[q]); j < qt->capacity; ++j) {
      for (int k = 0; k < es; ++k) {
        int64_t slot = q + 1 + j * es + k;
        if (values[slot] != default_[slot]) return false;
      }
    }
  }
  return true;
}

Encoder::Ctx Encoder::start(const std::vector<Val>& s) {
  Ctx c{s, {}, T(), T(), {}, F()};
  c.frame.assign(m_.frame_size, Val{ctx_.int_val(0), 0, 0});
  return c;
}

// ------------------------------------------------------------------------------------------------ expressions

Val Encoder::default_of(int64_t slot) {
  int64_t v = default_[slot];
  return bool_slot_[slot] ? Val{ctx_.bool_val(v != 0), v, v} : Val{ctx_.int_val(v), v, v};
}

Encoder::LocSet Encoder::loc(Ctx& c, const model::Expr* e) {
  switch (e->op) {
    case Op::kSlot: return {Loc{T(), e->value}};
    case Op::kField: {
      LocSet l = loc(c, e->a);
      for (Loc& x : l) x.slot += e->value;
      return l;
    }
    case Op::kIndex: {
      Val i = eval(c, e->b);
      z3::expr ii = as_int(i);
      int64_t last = e->lo + e->count - 1;
      if (i.lo < e->lo || i.hi > last) error(c, ii < ctx_.int_val(e->lo) || ii > ctx_.int_val(last), "runtime_error");
      LocSet base = loc(c, e->a);
      LocSet out;
      int64_t from = std::max(i.lo, e->lo), to = std::min(i.hi, last);
      for (const Loc& b : base) {
        for (int64_t k = from; k <= to; ++k) {
          z3::expr cond = i.lo == i.hi ? b.cond : band(b.cond, ii == ctx_.int_val(k));
          out.push_back(Loc{cond, b.slot + (k - e->lo) * e->stride});
        }
      }
      return out;
    }
    case Op::kHead: {
      LocSet q = loc(c, e->a);
      for (Loc& x : q) {
        Val len = c.st[x.slot];
        if (len.lo == 0) error(c, band(x.cond, len.e == ctx_.int_val(0)), "runtime_error");
        x.slot += 1;
      }
      return q;
    }
    default: break;
  }
  throw std::logic_error("symbolic: expression is not a location");
}

Val Encoder::read(Ctx& c, const LocSet& l, int offset) {
  if (l.empty()) return default_of(0);  // every candidate is an error; the value is irrelevant
  Val v = c.st[l.back().slot + offset];
  for (size_t k = l.size() - 1; k-- > 0;) v = ite(l[k].cond, c.st[l[k].slot + offset], v);
  return v;
}

void Encoder::write(Ctx& c, const LocSet& l, int offset, const Val& v) {
  for (const Loc& x : l) {
    int64_t slot = x.slot + offset;
    Val w = v;
    if (bool_slot_[slot] && !w.e.is_bool()) w = Val{as_bool(w), 0, 1};
    if (!bool_slot_[slot] && w.e.is_bool()) w = Val{as_int(w), w.lo, w.hi};
    c.st[slot] = ite(x.cond, w, c.st[slot]);
  }
}

void Encoder::check_range(Ctx& c, const Val& v, const Type* t) {
  if (v.lo >= t->lo && v.hi <= t->hi) return;
  z3::expr x = as_int(v);
  error(c, x < ctx_.int_val(t->lo) || x > ctx_.int_val(t->hi), "runtime_error");
}

void Encoder::bind_args(Ctx& c, const std::vector<const model::Expr*>& args, const std::vector<const Type*>& types,
                        const std::vector<int>& frames) {
  std::vector<Val> vals;
  for (const model::Expr* a : args) vals.push_back(eval(c, a));
  for (size_t i = 0; i < vals.size(); ++i) {
    check_range(c, vals[i], types[i]);
    c.frame[frames[i]] = vals[i];
  }
}

Val Encoder::arith(Ctx& c, const model::Expr* e) {
  Val x = e->op == Op::kNeg ? num(0, nullptr) : eval(c, e->a);
  Val y = eval(c, e->op == Op::kNeg ? e->a : e->b);
  z3::expr xe = as_int(x), ye = as_int(y);
  __int128 lo, hi;
  z3::expr r = xe;
  switch (e->op) {
    case Op::kNeg:
    case Op::kSub:
      r = xe - ye;
      lo = static_cast<__int128>(x.lo) - y.hi;
      hi = static_cast<__int128>(x.hi) - y.lo;
      break;
    case Op::kAdd:
      r = xe + ye;
      lo = static_cast<__int128>(x.lo) + y.lo;
      hi = static_cast<__int128>(x.hi) + y.hi;
      break;
    default: {  // kMul
      r = xe * ye;
      __int128 p[4] = {static_cast<__int128>(x.lo) * y.lo, static_cast<__int128>(x.lo) * y.hi,
                       static_cast<__int128>(x.hi) * y.lo, static_cast<__int128>(x.hi) * y.hi};
      lo = *std::min_element(p, p + 4);
      hi = *std::max_element(p, p + 4);
      break;
    }
  }
  if (x.lo == x.hi && y.lo == y.hi && lo >= kMin && hi <= kMax) return Val{ctx_.int_val(static_cast<int64_t>(lo)),
                                                                            static_cast<int64_t>(lo), static_cast<int64_t>(lo)};
  if (lo < kMin || hi > kMax) error(c, r < ctx_.int_val(kMin) || r > ctx_.int_val(kMax), "runtime_error");
  return Val{r, clamp128(lo), clamp128(hi)};
}

Val Encoder::eval(Ctx& c, const model::Expr* e) {
  switch (e->op) {
    case Op::kConst: {
      if (overrides_ != nullptr) {
        auto it = overrides_->find(e);
        if (it != overrides_->end()) return it->second;
      }
      return num(e->value, e->type);
    }
    case Op::kFrame: return c.frame[e->value];
    case Op::kSlot:
    case Op::kIndex:
    case Op::kField:
    case Op::kHead: return read(c, loc(c, e), 0);
    case Op::kNot: {
      Val a = eval(c, e->a);
      z3::expr b = bnot(as_bool(a));
      return Val{b, b.is_true() ? 1 : 0, b.is_false() ? 0 : 1};
    }
    case Op::kNeg:
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul: return arith(c, e);
    case Op::kDiv:
    case Op::kMod: {
      Val x = eval(c, e->a), y = eval(c, e->b);
      z3::expr xe = as_int(x), ye = as_int(y);
      if (y.lo <= 0 && y.hi >= 0) error(c, ye == ctx_.int_val(0), "runtime_error");
      if (x.lo == kMin && y.lo <= -1 && y.hi >= -1) {
        error(c, xe == ctx_.int_val(kMin) && ye == ctx_.int_val(-1), "runtime_error");
      }
      if (x.lo == x.hi && y.lo == y.hi && y.lo != 0 && !(x.lo == kMin && y.lo == -1)) {
        int64_t r = e->op == Op::kDiv ? x.lo / y.lo : x.lo % y.lo;
        if (e->op == Op::kMod && r < 0 && y.lo > 0) r += y.lo;
        return Val{ctx_.int_val(r), r, r};
      }
      if (y.lo == y.hi && y.lo > 0) {
        // A positive constant divisor (the common case, `% N`): Z3's Euclidean mod is eval.cc's adjusted remainder;
        // its div is C++'s truncation for a non-negative dividend.
        z3::expr d = ctx_.int_val(y.lo);
        if (e->op == Op::kMod) return Val{z3::mod(xe, d), 0, y.lo - 1};
        z3::expr q = x.lo >= 0 ? xe / d : z3::ite(xe >= 0, xe / d, -((-xe) / d));
        return Val{q, x.lo / y.lo, x.hi / y.lo};  // truncation by a positive constant is monotone
      }
      // C++ truncating division; the remainder is adjusted to be non-negative for a positive divisor (eval.cc).
      z3::expr ax = z3::ite(xe >= 0, xe, -xe), ay = z3::ite(ye >= 0, ye, -ye);
      z3::expr q = z3::ite((xe >= 0) == (ye >= 0), (ax / ay), -(ax / ay));
      int64_t bound = std::max({x.lo == kMin ? kMax : std::abs(x.lo), x.hi == kMin ? kMax : std::abs(x.hi)});
      if (e->op == Op::kDiv) return Val{q, -bound, bound};
      z3::expr r = xe - ye * q;
      z3::expr adj = z3::ite(r < 0 && ye > 0, r + ye, r);
      int64_t yb = std::max({y.lo == kMin ? kMax : std::abs(y.lo), y.hi == kMin ? kMax : std::abs(y.hi)});
      return Val{adj, -yb, yb};
    }
    case Op::kEq:
    case Op::kNe: {
      z3::expr eq = T();
      if (e->equal_composite) {
        LocSet a = loc(c, e->a), b = loc(c, e->b);
        for (int k = 0; k < e->a->type->slots; ++k) {
          Val x = read(c, a, k), y = read(c, b, k);
          if (!z3::eq(x.e, y.e)) eq = band(eq, x.e.is_bool() && y.e.is_bool() ? x.e == y.e : as_int(x) == as_int(y));
        }
      } else {
        Val x = eval(c, e->a), y = eval(c, e->b);
        if (x.lo == x.hi && y.lo == y.hi) eq = ctx_.bool_val(x.lo == y.lo);
        else if (x.hi < y.lo || y.hi < x.lo) eq = F();
        else if (z3::eq(x.e, y.e)) eq = T();
        else eq = x.e.is_bool() && y.e.is_bool() ? x.e == y.e : as_int(x) == as_int(y);
      }
      z3::expr r = e->op == Op::kEq ? eq : bnot(eq);
      return Val{r, r.is_true() ? 1 : 0, r.is_false() ? 0 : 1};
    }
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe: {
      Val x = eval(c, e->a), y = eval(c, e->b);
      z3::expr r = F();
      if (x.lo == x.hi && y.lo == y.hi) {
        bool v = e->op == Op::kLt ? x.lo < y.lo : e->op == Op::kLe ? x.lo <= y.lo : e->op == Op::kGt ? x.lo > y.lo
                                                                                                   : x.lo >= y.lo;
        r = ctx_.bool_val(v);
      } else {
        z3::expr xe = as_int(x), ye = as_int(y);
        r = e->op == Op::kLt ? xe < ye : e->op == Op::kLe ? xe <= ye : e->op == Op::kGt ? xe > ye : xe >= ye;
      }
      return Val{r, r.is_true() ? 1 : 0, r.is_false() ? 0 : 1};
    }
    case Op::kAnd:
    case Op::kOr:
    case Op::kImplies: {
      // Short circuit: errors in the right operand count only when it is evaluated.
      z3::expr a = as_bool(eval(c, e->a));
      z3::expr go = e->op == Op::kOr ? bnot(a) : a;
      z3::expr r = F();
      if (go.is_false()) {
        r = e->op == Op::kAnd ? F() : T();
      } else {
        z3::expr saved = c.guard;
        c.guard = band(saved, go);
        z3::expr b = as_bool(eval(c, e->b));
        c.guard = saved;
        r = e->op == Op::kAnd ? band(a, b) : e->op == Op::kOr ? bor(a, b) : bor(bnot(a), b);
      }
      return Val{r, r.is_true() ? 1 : 0, r.is_false() ? 0 : 1};
    }
    case Op::kTernary: {
      z3::expr cond = as_bool(eval(c, e->a));
      if (cond.is_true()) return eval(c, e->b);
      if (cond.is_false()) return eval(c, e->c);
      z3::expr saved = c.guard;
      c.guard = band(saved, cond);
      Val a = eval(c, e->b);
      c.guard = band(saved, bnot(cond));
      Val b = eval(c, e->c);
      c.guard = saved;
      return ite(cond, a, b);
    }
    case Op::kCallFn: {
      bind_args(c, e->args, e->fn->param_types, e->fn->param_frames);
      Val r = eval(c, e->fn->body);
      if (e->type->scalar()) check_range(c, r, e->type);
      return r;
    }
    case Op::kAt: {
      int64_t pc_slot = e->stride;
      LocSet l;
      if (e->a != nullptr) {
        Val i = eval(c, e->a);
        z3::expr ii = as_int(i);
        int64_t last = e->lo + e->count - 1;
        if (i.lo < e->lo || i.hi > last) error(c, ii < ctx_.int_val(e->lo) || ii > ctx_.int_val(last), "runtime_error");
        for (int64_t k = std::max(i.lo, e->lo); k <= std::min(i.hi, last); ++k) {
          l.push_back(Loc{i.lo == i.hi ? T() : ii == ctx_.int_val(k), pc_slot + (k - e->lo)});
        }
      } else {
        l.push_back(Loc{T(), pc_slot});
      }
      Val pc = read(c, l, 0);
      z3::expr r = pc.lo == pc.hi ? ctx_.bool_val(pc.lo == e->value)
                   : (e->value < pc.lo || e->value > pc.hi) ? F() : pc.e == ctx_.int_val(e->value);
      return Val{r, r.is_true() ? 1 : 0, r.is_false() ? 0 : 1};
    }
    case Op::kForall:
    case Op::kExists: {
      bool all = e->op == Op::kForall;
      z3::expr acc = all ? T() : F();  // value so far; evaluation continues while acc is the neutral value
      z3::expr saved = c.guard;
      for (int64_t v = e->lo; v < e->lo + e->count; ++v) {
        z3::expr go = all ? acc : bnot(acc);
        if (go.is_false()) break;
        c.frame[e->value] = num(v, nullptr);
        c.guard = band(saved, go);
        z3::expr b = as_bool(eval(c, e->a));
        acc = all ? band(acc, b) : bor(acc, b);
      }
      c.guard = saved;
      return Val{acc, acc.is_true() ? 1 : 0, acc.is_false() ? 0 : 1};
    }
    case Op::kLen:
    case Op::kEmpty:
    case Op::kFull: {
      Val len = read(c, loc(c, e->a), 0);
      if (e->op == Op::kLen) return len;
      int64_t target = e->op == Op::kEmpty ? 0 : e->a->type->capacity;
      z3::expr r = len.lo == len.hi ? ctx_.bool_val(len.lo == target)
                   : (target < len.lo || target > len.hi) ? F() : len.e == ctx_.int_val(target);
      return Val{r, r.is_true() ? 1 : 0, r.is_false() ? 0 : 1};
    }
    case Op::kContains: {
      LocSet q = loc(c, e->a);
      Val v = eval(c, e->b);
      const Type* qt = e->a->type;
      Val len = read(c, q, 0);
      z3::expr r = F();
      for (int i = 0; i < qt->capacity; ++i) {
        if (len.hi <= i) break;
        Val x = read(c, q, 1 + i * qt->elem->slots);
        z3::expr same = x.lo == x.hi && v.lo == v.hi ? ctx_.bool_val(x.lo == v.lo)
                        : x.e.is_bool() && v.e.is_bool() ? x.e == v.e : as_int(x) == as_int(v);
        z3::expr present = len.lo > i ? T() : len.e > ctx_.int_val(i);
        r = bor(r, band(present, same));
      }
      return Val{r, r.is_true() ? 1 : 0, r.is_false() ? 0 : 1};
    }
  }
  throw std::logic_error("symbolic: unknown expression");
}

// ------------------------------------------------------------------------------------------------ statements

void Encoder::reset(Ctx& c, const LocSet& l, int offset, const Type* t) {
  switch (t->kind) {
    case TypeKind::kBool:
    case TypeKind::kInt:
    case TypeKind::kEnum:
      for (const Loc& x : l) c.st[x.slot + offset] = ite(x.cond, default_of(x.slot + offset), c.st[x.slot + offset]);
      return;
    case TypeKind::kRecord:
      for (size_t i = 0; i < t->field_types.size(); ++i) reset(c, l, offset + t->field_offsets[i], t->field_types[i]);
      return;
    case TypeKind::kArray:
      for (int64_t i = 0; i < t->index->count(); ++i) reset(c, l, offset + static_cast<int>(i) * t->elem->slots, t->elem);
      return;
    case TypeKind::kQueue:
      for (const Loc& x : l) c.st[x.slot + offset] = ite(x.cond, Val{ctx_.int_val(0), 0, 0}, c.st[x.slot + offset]);
      for (int i = 0; i < t->capacity; ++i) reset(c, l, offset + 1 + i * t->elem->slots, t->elem);
      return;
  }
}

void Encoder::exec(Ctx& c, const std::vector<const model::Stmt*>& body) {
  for (const model::Stmt* s : body) {
    if (c.ok.is_false()) return;  // a require failed on every path: nothing after it runs
    exec_one(c, s);
  }
}

void Encoder::exec_one(Ctx& c, const model::Stmt* s) {
  switch (s->op) {
    case SOp::kSkip:
    case SOp::kRefuse: return;
    case SOp::kAssign: {
      const Type* t = s->lhs->type;
      if (t->scalar()) {
        Val v = eval(c, s->rhs);
        LocSet l = loc(c, s->lhs);
        check_range(c, v, t);
        write(c, l, 0, v);
      } else {
        LocSet dst = loc(c, s->lhs), src = loc(c, s->rhs);
        std::vector<Val> tmp;
        for (int k = 0; k < t->slots; ++k) tmp.push_back(read(c, src, k));
        for (int k = 0; k < t->slots; ++k) write(c, dst, k, tmp[k]);
      }
      return;
    }
    case SOp::kCall:
      bind_args(c, s->args, s->proc->param_types, s->proc->param_frames);
      exec(c, s->proc->body);
      return;
    case SOp::kIf: {
      z3::expr cond = as_bool(eval(c, s->rhs));
      if (cond.is_true()) return exec(c, s->body);
      if (cond.is_false()) return exec(c, s->else_body);
      std::vector<Val> st0 = c.st;
      z3::expr guard0 = c.guard, ok0 = c.ok;
      c.guard = band(guard0, cond);
      exec(c, s->body);
      std::vector<Val> st1 = std::move(c.st);
      z3::expr ok1 = c.ok;
      c.st = std::move(st0);
      c.ok = ok0;
      c.guard = band(guard0, bnot(cond));
      exec(c, s->else_body);
      for (size_t i = 0; i < c.st.size(); ++i) c.st[i] = ite(cond, st1[i], c.st[i]);
      c.ok = z3::eq(ok1, c.ok) ? ok1 : bor(band(cond, ok1), band(bnot(cond), c.ok));
      c.guard = guard0;
      return;
    }
    case SOp::kFor:
      for (int64_t v = s->lo; v <= s->hi; ++v) {
        c.frame[s->frame] = num(v, nullptr);
        exec(c, s->body);
      }
      return;
    case SOp::kRequire: {
      z3::expr cond = as_bool(eval(c, s->rhs));
      require(c, cond);
      return;
    }
    case SOp::kFail: error(c, T(), s->property); return;
    case SOp::kAssert: error(c, bnot(as_bool(eval(c, s->rhs))), s->property); return;
    case SOp::kPush: {
      const Type* qt = s->lhs->type;
      const Type* et = qt->elem;
      int es = et->slots;
      LocSet q = loc(c, s->lhs);
      for (const Loc& x : q) {
        Val len = c.st[x.slot];
        if (len.hi >= qt->capacity) error(c, band(x.cond, len.e >= ctx_.int_val(qt->capacity)), "runtime_error");
      }
      std::vector<Val> vals;
      if (et->scalar()) {
        Val v = eval(c, s->rhs);
        check_range(c, v, et);
        vals.push_back(v);
      } else {
        LocSet src = loc(c, s->rhs);
        for (int k = 0; k < es; ++k) vals.push_back(read(c, src, k));
      }
      for (const Loc& x : q) {
        Val len = c.st[x.slot];
        for (int j = std::max<int64_t>(0, len.lo); j < qt->capacity && j <= len.hi; ++j) {
          z3::expr at = band(x.cond, len.lo == len.hi ? T() : len.e == ctx_.int_val(j));
          for (int k = 0; k < es; ++k) write(c, {Loc{at, x.slot + 1 + j * es + k}}, 0, vals[k]);
        }
        Val inc{len.lo == len.hi ? ctx_.int_val(len.lo + 1) : len.e + 1, len.lo + 1, std::min<int64_t>(len.hi + 1, qt->capacity)};
        c.st[x.slot] = ite(x.cond, inc, c.st[x.slot]);
      }
      return;
    }
    case SOp::kPop: {
      const Type* qt = s->lhs->type;
      int es = qt->elem->slots;
      int cap = qt->capacity;
      LocSet q = loc(c, s->lhs);
      for (const Loc& x : q) {
        Val n = c.st[x.slot];
        if (n.lo <= 0) error(c, band(x.cond, n.e == ctx_.int_val(0)), "runtime_error");
        std::vector<Val> old(c.st.begin() + x.slot + 1, c.st.begin() + x.slot + 1 + cap * es);
        for (int j = 0; j < cap; ++j) {
          // new[j] = old[j+1] if j+1 < n; the default if j+1 == n; unchanged past the end.
          z3::expr shift = n.lo == n.hi ? ctx_.bool_val(j + 1 < n.lo) : n.e > ctx_.int_val(j + 1);
          z3::expr last = n.lo == n.hi ? ctx_.bool_val(j + 1 == n.lo) : n.e == ctx_.int_val(j + 1);
          for (int k = 0; k < es; ++k) {
            int64_t slot = x.slot + 1 + j * es + k;
            Val v = old[j * es + k];
            v = ite(last, default_of(slot), v);
            if (j + 1 < cap) v = ite(shift, old[(j + 1) * es + k], v);
            c.st[slot] = ite(x.cond, v, c.st[slot]);
          }
        }
        Val dec{n.lo == n.hi ? ctx_.int_val(n.lo - 1) : n.e - 1, std::max<int64_t>(n.lo - 1, 0), n.hi - 1};
        if (dec.hi < dec.lo) dec.hi = dec.lo;
        c.st[x.slot] = ite(x.cond, dec, c.st[x.slot]);
      }
      return;
    }
    case SOp::kClear: reset(c, loc(c, s->lhs), 0, s->lhs->type); return;
  }
}

// ------------------------------------------------------------------------------------------------ actions

Effect Encoder::action(const std::vector<Val>& s, const ActionRef& a) {
  Ctx c = start(s);
  if (a.process >= 0) {
    const model::ProcessInstance& pi = m_.processes[a.process];
    const model::Edge& edge = pi.edges[a.pc][a.edge];
    const Val& pc = s[pi.pc_slot];
    c.ok = pc.lo == pc.hi ? ctx_.bool_val(pc.lo == a.pc) : pc.e == ctx_.int_val(a.pc);
    for (const model::Expr* cond : edge.conds) {
      if (c.ok.is_false()) break;
      z3::expr v = as_bool(eval(c, cond));
      require(c, v);
    }
    if (edge.step->guard != nullptr && !c.ok.is_false()) {
      z3::expr v = as_bool(eval(c, edge.step->guard));
      require(c, v);
    }
    if (!c.ok.is_false()) exec(c, edge.step->body);
    c.st[pi.pc_slot] = Val{ctx_.int_val(edge.step->next_pc), edge.step->next_pc, edge.step->next_pc};
  } else {
    const model::Rule& r = m_.rules[a.rule];
    int64_t tuple = a.tuple;
    for (size_t i = r.param_types.size(); i-- > 0;) {
      const Type* t = r.param_types[i];
      c.frame[r.param_frames[i]] = num(t->lo + tuple % t->count(), t);
      tuple /= t->count();
    }
    if (r.guard != nullptr) {
      z3::expr v = as_bool(eval(c, r.guard));
      require(c, v);
    }
    if (!c.ok.is_false()) exec(c, r.body);
  }
  Effect out{c.ok, failed_any(c), c.failed, std::move(c.st)};
  return out;
}

z3::expr Encoder::invariant_violated(const std::vector<Val>& s, size_t index) {
  Ctx c = start(s);
  z3::expr v = as_bool(eval(c, m_.invariants.at(index).expr));
  return bor(failed_any(c), bnot(v));
}

z3::expr Encoder::valid_end(const std::vector<Val>& s) {
  z3::expr all = T();
  for (const model::ProcessInstance& pi : m_.processes) {
    const Val& pc = s[pi.pc_slot];
    z3::expr ended = F();
    for (size_t v = 0; v < pi.valid_end.size(); ++v) {
      if (static_cast<int64_t>(v) < pc.lo || static_cast<int64_t>(v) > pc.hi) continue;
      z3::expr here = pc.lo == pc.hi ? T() : pc.e == ctx_.int_val(static_cast<int64_t>(v));
      z3::expr end_here = F();
      if (pi.valid_end[v]) {
        end_here = T();
      } else {
        for (const auto& conds : pi.end_conds[v]) {
          // ModelSystem::holds: conditions in order; a runtime error means "not an end".
          Ctx c = start(s);
          z3::expr all_hold = T();
          for (const model::Expr* cond : conds) {
            c.guard = all_hold;
            all_hold = band(all_hold, as_bool(eval(c, cond)));
          }
          end_here = bor(end_here, band(all_hold, bnot(failed_any(c))));
        }
      }
      ended = bor(ended, band(here, end_here));
    }
    all = band(all, ended);
  }
  return all;
}

}  // namespace qpcheck::symbolic
