// successor_of and enabled_count (transition_system.h): what an engine asks of one state besides the search itself.
#include "checker/model/transition_system.h"

namespace qpcheck::model {

ActionOutcome successor_of(TransitionSystem& sys, const uint64_t* state, uint32_t action) {
  struct Keep : SuccessorSink {
    uint32_t want = 0;
    int words = 0;
    ActionOutcome out;
    void successor(uint32_t a, const uint64_t* s) override {
      if (a == want && !out.next) out.next.emplace(s, s + words);
    }
    void failure(uint32_t a, const Violation& v) override {
      if (a == want && !out.failure) out.failure = v;
    }
  } keep;
  keep.want = action;
  keep.words = sys.state_words();
  sys.successors(state, keep);
  return std::move(keep.out);
}

int enabled_count(TransitionSystem& sys, const uint64_t* state) {
  struct Drop : SuccessorSink {
    void successor(uint32_t, const uint64_t*) override {}
    void failure(uint32_t, const Violation&) override {}
  } drop;
  return sys.successors(state, drop);
}

}  // namespace qpcheck::model
