// The recorder's call log (docs/record-log.md, schema version 1; written by verbs_backend/recorder) read back, and a
// set of logs of one run (one per process) turned into observations for the conformance check
// (checker/conform/observation.h, docs/conform.md): each librdmacm / libibverbs call becomes the replay operation
// that stands for it (verbs_backend/replay_ops.h, read in the other direction), with its cm_ids, QPs, CQs and SRQs
// named as the spec names them (ACTIVE[c], PASSIVE[c], SRQ s).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/conform/observation.h"

namespace qpcheck::verbs {

inline constexpr int kCallLogVersion = 1;
inline constexpr size_t kMaxCallLogBytes = size_t{256} << 20;

// The log cannot be read at all (missing, not a regular file, too large): a usage error (exit 4).
struct CallLogFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The log is not a valid call log: what() is "FILE:LINE: field 'F': WHAT" (or "FILE:LINE: WHAT" when no one field
// is at fault). Exit 4 in `qpcheck conform` (docs/conform.md).
struct CallLogError : std::runtime_error {
  CallLogError(const std::string& file, int line, const std::string& field, const std::string& what);
  std::string file;
  int line;
  std::string field;
};

struct LoggedCall {
  int line = 0;              // 1-based line of the log file
  int64_t seq = 0;
  int64_t t_ns = 0;
  int64_t tid = 0;
  std::string call;
  int64_t ret = 0;
  int64_t err = 0;           // errno, 0 when absent
  std::string inside;        // the outer recorded call, or ""
  nlohmann::json fields;     // the whole record
};

struct CallLog {
  std::string path;
  nlohmann::json header;
  std::vector<LoggedCall> calls;
  bool ended = false;        // the trailer is there: the program exited normally
  int64_t lost = 0;          // records the recorder could not write (trailer)
  int64_t empty_polls = 0;
};

// Reads and validates a log. Throws CallLogFileError or CallLogError.
CallLog read_call_log(const std::string& path);
// The same for log text in memory, named `name` in errors (tests, the fuzzer).
CallLog parse_call_log(const std::string& name, const std::string& text);

struct Observed {
  std::vector<conform::Observation> observations;  // in time order over every log
  std::vector<conform::Skipped> skipped;
  std::vector<std::string> notes;                  // how endpoints were named, logs without a trailer, lost records
  bool ended = true;                               // every log has its trailer
};

// The observations of one run recorded as `logs` (one per process), for a spec whose steps can make the replay
// operations `spec_ops` (conform::replay_ops_used). Calls are merged in time order (t, then log, then seq); a call
// made inside another recorded call is skipped (librdmacm's own ibv_modify_qp in rdma_accept), and so is a call
// whose operation the spec never makes (rdma_create_id and address resolution when the spec has no create_id,
// ibv_poll_cq when it never polls), each listed in Observed::skipped.
// Endpoints: the k-th active cm_id (the first that calls rdma_resolve_addr or rdma_connect) is ACTIVE[k]; the cm_id
// of a CONNECT_REQUEST is PASSIVE[c] for the ACTIVE[c] whose address it comes from (local/peer fields), else the
// next unpaired index. A QP made with ibv_create_qp without a cm_id (plain verbs) has no name in the log: the i-th
// such QP of logs[l] is plain_qps[l][i] (qpcheck conform --map). Throws CallLogError for a call on a handle the log
// never created (an unknown QP or CQ) and for a plain-verbs QP the map does not name.
Observed observe(const std::vector<CallLog>& logs, const std::vector<std::string>& spec_ops,
                 const std::vector<std::vector<std::string>>& plain_qps = {});

// "ACTIVE", "PASSIVE[2]" (an endpoint as a spec names it) in the form observations use ("ACTIVE[0]", "PASSIVE[2]");
// "" when `text` is not one.
std::string endpoint_name(const std::string& text);

}  // namespace qpcheck::verbs
