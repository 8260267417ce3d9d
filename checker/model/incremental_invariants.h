// Tier "incremental invariants" of ModelSystem (docs/performance.md, "Incremental invariant checks");
// internal to checker/model.
//
// Contract: build() splits every specialised invariant into its top-level conjuncts, in evaluation order (an
// unrolled forall gives one per value), and lists per action the conjuncts that read a slot the action can write
// (footprints.h), ascending. Given a source state in which every invariant held, a successor by that action can
// differ from it only in those conjuncts, so evaluating them in order finds what check_invariants() would find:
// the first false or failing conjunct. An action whose footprint is unknown (or a rule whose parameters are bound
// at run time) checks everything (check_all). A conjunct over quick tests only (and/or/not/implies over SlotConditions,
// which cannot fail) has a QuickConjunct, evaluated on the packed state (holds), by a truth table when its fields
// lie within kMaxTableBits of one word; the others are evaluated by the caller's tree evaluator, after unpacking
// only the slots listed for the action (slot_begin / slot).
#pragma once

#include <cstdint>
#include <vector>

#include "checker/model/model.h"
#include "checker/model/slot_condition.h"
#include "checker/model/specialised_action.h"
#include "checker/model/state_layout.h"

namespace qpcheck::model::tier {

struct Conjunct {
  int invariant;                    // index in Model::invariants
  const Expr* e;
};

// A node of a conjunct's quick form: and/or/not/implies over quick tests (make_test's forms, which cannot fail).
struct QuickNode {
  enum class Kind : uint8_t { kTest, kConst, kNot, kAnd, kOr, kImplies } kind = Kind::kConst;
  bool value = false;               // kConst
  int32_t a = -1, b = -1;           // operands (node indexes)
  SlotCondition t;                       // kTest, located
};

// A conjunct's quick form (root node, or -1: none) and, when every field it reads lies in bits [shift, shift + 12)
// of one word, its truth table: bit raw of the table at `table`.. is its value when those bits hold raw.
struct QuickConjunct {
  int32_t root = -1;
  bool tabled = false;
  uint32_t word = 0, shift = 0;
  uint64_t mask = 0;
  uint32_t table = 0;               // index in the tables (64 raw values per entry)
};

class IncrementalInvariants {
 public:
  static constexpr int kMaxTableBits = 12;

  // `invariants`: the specialised invariants, in declaration order; `actions`: per action id.
  void build(const Model& model, const StateLayout& layout, const std::vector<const Expr*>& invariants,
             const std::vector<SpecialisedAction>& actions);

  // True: check every invariant after `action` (footprint unknown, or an id beyond the table).
  bool check_all(uint32_t action) const { return action >= after_full_.size() || after_full_[action]; }
  // The conjuncts to check after `action`: conjunct_id(k) for k in [conj_begin(action), conj_begin(action + 1)).
  uint32_t conj_begin(uint32_t action) const { return after_begin_[action]; }
  uint32_t conjunct_id(uint32_t k) const { return after_conj_[k]; }
  // The slots the non-quick ones among them read: slot(k) for k in [slot_begin(action), slot_begin(action + 1)).
  uint32_t slot_begin(uint32_t action) const { return after_slot_begin_[action]; }
  uint32_t slot(uint32_t k) const { return after_slot_[k]; }
  const Conjunct& conjunct(uint32_t c) const { return conjuncts_[c]; }
  const QuickConjunct& quick(uint32_t c) const { return conj_quick_[c]; }

  // The value of a conjunct with a quick form (q.root >= 0) in the packed state `w`.
  bool holds(const QuickConjunct& q, const uint64_t* w, const StateLayout& layout) const {
    if (q.tabled) {
      const uint64_t raw = (w[q.word] >> q.shift) & q.mask;
      return (qtable_[q.table + (raw >> 6)] >> (raw & 63)) & 1;
    }
    return eval(q.root, w, layout);
  }

 private:
  bool eval(int32_t node, const uint64_t* w, const StateLayout& layout) const {
    const QuickNode& q = qnodes_[node];
    switch (q.kind) {
      case QuickNode::Kind::kTest: return holds_packed(q.t, w, layout);
      case QuickNode::Kind::kConst: return q.value;
      case QuickNode::Kind::kNot: return !eval(q.a, w, layout);
      case QuickNode::Kind::kAnd: return eval(q.a, w, layout) && eval(q.b, w, layout);
      case QuickNode::Kind::kOr: return eval(q.a, w, layout) || eval(q.b, w, layout);
      case QuickNode::Kind::kImplies: return !eval(q.a, w, layout) || eval(q.b, w, layout);
    }
    return true;
  }
  // The quick form of `e` (appended to qnodes_), or -1 if some part of it is not quick.
  int32_t compile_quick(const Expr* e, const StateLayout& layout);
  // Fills q.tabled, word, shift, mask and table, when the conjunct's fields are close enough.
  void tabulate(QuickConjunct& q, const StateLayout& layout);

  std::vector<Conjunct> conjuncts_;   // every invariant's top-level conjuncts, in evaluation order
  std::vector<QuickNode> qnodes_;
  std::vector<QuickConjunct> conj_quick_;  // per conjunct
  std::vector<uint64_t> qtable_;
  // Per action (CSR, after_begin_[id]..after_begin_[id + 1]): the conjuncts (ascending) that read a slot it can
  // write, and the slots the non-quick ones among them read (the only ones unpacked). after_full_[id]: footprint
  // unknown, check all.
  std::vector<uint32_t> after_begin_, after_conj_;
  std::vector<uint32_t> after_slot_begin_, after_slot_;
  std::vector<uint8_t> after_full_;
};

}  // namespace qpcheck::model::tier
