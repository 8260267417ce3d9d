#include "verbs_backend/replay_ops.h"

namespace qpcheck::verbs {

const lang::ReplayVocabulary& replay_vocabulary() {
  static const lang::ReplayVocabulary v{kReplayOps,     kCmEventNames, kWcStatusNames,   kWcOpcodeNames,
                                        kWrOpcodeNames, kQpStateNames, kAsyncEventNames, kCqKindNames,
                                        kRejStatusNames};
  return v;
}

}  // namespace qpcheck::verbs
