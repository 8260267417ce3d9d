#include "checker/model/incremental_invariants.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "checker/model/footprints.h"

namespace qpcheck::model::tier {

void IncrementalInvariants::build(const Model& model, const StateLayout& layout,
                                  const std::vector<const Expr*>& invariants,
                                  const std::vector<SpecialisedAction>& actions) {
  Footprint::Memo memo;
  const int64_t slots = static_cast<int64_t>(model.slots.size());
  // `a && b` is false iff a is false, or a is true and b is false; evaluated left to right, so an invariant's value
  // (and its first runtime error) is that of the first conjunct in this order that is false (or fails).
  std::function<void(int, const Expr*)> split = [&](int inv, const Expr* x) {
    if (x->op == Op::kAnd) {
      split(inv, x->a);
      split(inv, x->b);
      return;
    }
    conjuncts_.push_back(Conjunct{inv, x});
  };
  for (size_t i = 0; i < invariants.size(); ++i) split(static_cast<int>(i), invariants[i]);
  for (const Conjunct& c : conjuncts_) {
    QuickConjunct& q = conj_quick_.emplace_back();
    if (!model.slots.empty()) q.root = compile_quick(c.e, layout);
    if (q.root >= 0) tabulate(q, layout);
  }
  // Which conjuncts read each slot; conjuncts whose footprint is unknown read every slot.
  std::vector<std::vector<uint32_t>> readers(slots);
  std::vector<std::vector<int64_t>> reads(conjuncts_.size());
  for (size_t c = 0; c < conjuncts_.size(); ++c) {
    Footprint fp{model, &memo};
    fp.expr(conjuncts_[c].e);
    std::vector<uint8_t> mark(slots, 0);
    auto add = [&](int64_t a, int64_t b) {
      for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) mark[x] = 1;
    };
    if (fp.all) add(0, slots);
    for (auto [a, b] : fp.touched) add(a, b);
    for (int64_t x = 0; x < slots; ++x) {
      if (mark[x]) {
        readers[x].push_back(static_cast<uint32_t>(c));
        reads[c].push_back(x);
      }
    }
  }
  const size_t n = actions.size();
  after_full_.assign(n, 0);
  after_begin_.assign(1, 0);
  after_slot_begin_.assign(1, 0);
  std::vector<uint8_t> conj_mark(conjuncts_.size()), slot_mark(slots);
  for (size_t id = 0; id < n; ++id) {
    const SpecialisedAction& f = actions[id];
    // Only writes matter: conditions and reads do not change the state.
    Footprint fp{model, &memo};
    fp.stmts(f.body);
    if (f.pc_slot >= 0) fp.written.emplace_back(f.pc_slot, f.pc_slot + 1);
    if (fp.all || f.rule >= 0) {
      after_full_[id] = 1;
    } else {
      std::fill(conj_mark.begin(), conj_mark.end(), 0);
      for (auto [a, b] : fp.written) {
        for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) {
          for (uint32_t c : readers[x]) conj_mark[c] = 1;
        }
      }
      std::fill(slot_mark.begin(), slot_mark.end(), 0);
      for (size_t c = 0; c < conjuncts_.size(); ++c) {
        if (!conj_mark[c]) continue;
        after_conj_.push_back(static_cast<uint32_t>(c));
        if (conj_quick_[c].root >= 0) continue;  // read from the packed state
        for (int64_t x : reads[c]) slot_mark[x] = 1;
      }
      for (int64_t x = 0; x < slots; ++x) {
        if (slot_mark[x]) after_slot_.push_back(static_cast<uint32_t>(x));
      }
    }
    after_begin_.push_back(static_cast<uint32_t>(after_conj_.size()));
    after_slot_begin_.push_back(static_cast<uint32_t>(after_slot_.size()));
  }
}

int32_t IncrementalInvariants::compile_quick(const Expr* e, const StateLayout& layout) {
  QuickNode q;
  SlotCondition t = make_test(e);
  if (t.kind != SlotCondition::Kind::kGeneral) {
    q.kind = QuickNode::Kind::kTest;
    q.t = t;
    locate(q.t, layout);
  } else if (e->op == Op::kConst) {
    q.kind = QuickNode::Kind::kConst;
    q.value = e->value != 0;
  } else if (e->op == Op::kNot || e->op == Op::kAnd || e->op == Op::kOr || e->op == Op::kImplies) {
    // operands are booleans; with leaves that cannot fail, evaluation order and short circuits do not matter
    q.a = compile_quick(e->a, layout);
    if (q.a < 0) return -1;
    if (e->op != Op::kNot) {
      q.b = compile_quick(e->b, layout);
      if (q.b < 0) return -1;
    }
    q.kind = e->op == Op::kNot ? QuickNode::Kind::kNot
             : e->op == Op::kAnd ? QuickNode::Kind::kAnd
             : e->op == Op::kOr  ? QuickNode::Kind::kOr
                                 : QuickNode::Kind::kImplies;
  } else {
    return -1;
  }
  qnodes_.push_back(q);
  return static_cast<int32_t>(qnodes_.size() - 1);
}

void IncrementalInvariants::tabulate(QuickConjunct& q, const StateLayout& layout) {
  uint32_t word = 0, lo = 64, hi = 0;
  bool ok = true;
  auto field = [&](int slot) {
    auto [w, m] = layout.field_bits(slot);
    if (m == 0) return;  // a constant slot: nothing read
    if (hi > 0 && static_cast<uint32_t>(w) != word) ok = false;
    word = static_cast<uint32_t>(w);
    lo = std::min<uint32_t>(lo, std::countr_zero(m));
    hi = std::max<uint32_t>(hi, 64 - std::countl_zero(m));
  };
  std::function<void(int32_t)> visit = [&](int32_t n) {
    const QuickNode& x = qnodes_[n];
    if (x.a >= 0) visit(x.a);
    if (x.b >= 0) visit(x.b);
    if (x.kind != QuickNode::Kind::kTest) return;
    switch (x.t.kind) {
      case SlotCondition::Kind::kDiff: field(x.t.slot); field(x.t.slot2); break;
      case SlotCondition::Kind::kContains: ok = false; break;  // reads elements by a length no table value may bound
      default: field(x.t.slot); break;
    }
  };
  visit(q.root);
  if (!ok || hi - std::min(lo, hi) > kMaxTableBits) return;
  if (hi == 0) lo = 0;  // reads only constants
  q.tabled = true;
  q.word = word;
  q.shift = lo;
  q.mask = (uint64_t{1} << (hi - lo)) - 1;
  q.table = static_cast<uint32_t>(qtable_.size());
  qtable_.resize(qtable_.size() + (q.mask >> 6) + 1, 0);
  std::vector<uint64_t> scratch(layout.words(), 0);
  for (uint64_t raw = 0; raw <= q.mask; ++raw) {
    scratch[word] = raw << lo;
    if (eval(q.root, scratch.data(), layout)) qtable_[q.table + (raw >> 6)] |= uint64_t{1} << (raw & 63);
  }
}

}  // namespace qpcheck::model::tier
