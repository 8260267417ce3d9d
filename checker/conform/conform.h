// The conformance check (docs/conform.md): is an observed run (observation.h) a behaviour of a spec? Trace
// validation in the manner of Cirstea, Kuppe, Loillier and Merz (2024) and of Netsem/SibylFS: the set of model states
// consistent with the observations so far, closed under the steps nobody observes, is carried from one observation
// to the next.
//
// A step of the model is observable when the procedures it calls declare a host replay operation (a verbs or CM
// call, ReplayOpSpec::host); its host operations, bound to the call's arguments (trace::bind_replay), must equal the
// next observations, in order. Every other step (fabric and CM rules, the device's own observations such as
// expect_cm_event, process steps without a call) is hidden and may be taken any number of times between two
// observations. Invariants are not evaluated (that is verify's job); a step that fails a property matches only an
// observation of a call that failed (or, as a contract the device does not check, one that succeeded), and the
// spec's run ends there: VIOLATES when no state consistent with the log makes that call legally.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/conform/observation.h"
#include "checker/lang/replay_vocabulary.h"
#include "checker/model/check_result.h"
#include "checker/model/model_system.h"
#include "checker/trace/trace.h"

namespace qpcheck::conform {

struct ConformLimits {
  uint64_t max_states = 1'000'000;  // model states held over all layers (0: no bound)
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* interrupt = nullptr;
};

// A next step the spec allowed where the observed run deviated.
struct Allowed {
  std::string actor;                     // "client", "server"
  std::vector<trace::ReplayStep> ops;    // its host operations, bound
  lang::Span span;                       // the statement or rule
  std::string fails;                     // the property its step violates, if it fails
};

struct ConformResult {
  // kPrefix: logs without their trailer (a program killed) that end inside a step of the spec: every observation is
  // matched, the last ones by the first operations of a step whose remaining operations were never made (a poll and
  // the re-post that should follow it): the recorded run is a prefix of a run of the spec, cut inside that step.
  enum class Verdict { kConforms, kDeviates, kViolates, kInconclusive, kPrefix };
  Verdict verdict = Verdict::kInconclusive;
  // kDeviates: the index of the first observation no run of the spec could take (observations.size() when the log
  // ended where every run of the spec still had to make a call); kViolates: the observation whose step fails a
  // property; kConforms and kPrefix: observations.size().
  size_t event = 0;
  std::vector<Allowed> allowed;          // kDeviates: the host steps enabled there, deduplicated
  std::optional<model::Violation> violation;  // kViolates: what the matched step fails
  // kViolates: the call returned an error (the device refused what the spec forbids), or it succeeded (the device let
  // it pass: a contract of the API that the provider does not check, such as rdma_destroy_id.3's "free the QP first").
  bool refused = false;
  std::string limit;                     // kInconclusive: "max-states", "time-limit", "interrupted"
  // A run of the spec through the observations: to the end (kConforms), to the failing step (kViolates), or the
  // shortest run through the longest matched prefix (kDeviates, kInconclusive). matched[i] is the observation that
  // path action i matched first, or -1 for a hidden step.
  model::Path path;
  std::vector<int> matched;
  // kPrefix: how many of the cut step's operations the log has (the step is the path's last action), and how many it
  // has in all.
  size_t cut_ops = 0, step_ops = 0;
  uint64_t states = 0;                   // model states held, over all observations
  uint64_t widest = 0;                   // the largest set of states consistent with one prefix of the log
  double seconds = 0;
};

// Checks `observations` against `system` from its initial states. `require_end`: the program ended normally, so the
// spec's run must be able to end too (every process terminated or at an `end` label, after hidden steps) once every
// observation is matched; without it (a log cut off), a log that ends inside a step is kPrefix. `vocabulary` says which replay operations are host ones. Never throws for a well-formed
// model; a step that cannot be evaluated counts as failing (runtime_error).
ConformResult check_conformance(model::ModelSystem& system, const lang::ReplayVocabulary& vocabulary,
                                const std::vector<Observation>& observations, bool require_end,
                                const ConformLimits& limits = {});

// The replay operations of every procedure the model's processes and rules can call (directly or through other
// procedures), by name: what the spec can observe. The log reader skips the calls of other operations.
std::vector<std::string> replay_ops_used(const model::Model& model);

}  // namespace qpcheck::conform
