// What the distributed search (explore::Options::transport) needs from its ranks' network: collective operations
// over P ranks, all of which call each of them in the same order. The MPI implementation is
// checker/cli/mpi_transport.h (Open MPI); tests use an in-process one over threads. Every call blocks until each rank
// has made it; a rank that cannot complete one (a peer died) throws TransportError.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace qpcheck::explore {

struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;   // 0..size()-1
  virtual int size() const = 0;   // P >= 1
  // All-to-all: `out[r]` (uint64 words) goes to rank r (out.size() == size()). `in` receives what every rank sent to
  // this one, rank 0's first, and `in_words[r]` how many words came from rank r.
  virtual void exchange(const std::vector<std::vector<uint64_t>>& out, std::vector<uint64_t>& in,
                        std::vector<uint64_t>& in_words) = 0;
  // Element-wise over all ranks, in place: sum, minimum, maximum.
  virtual void sum(std::vector<uint64_t>& v) = 0;
  virtual void min(std::vector<uint64_t>& v) = 0;
  virtual void max(std::vector<uint64_t>& v) = 0;
  // Rank `root`'s `v` (any size) to every rank.
  virtual void broadcast(std::vector<uint64_t>& v, int root) = 0;
};

}  // namespace qpcheck::explore
