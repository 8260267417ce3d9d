// The distributed search's network on Open MPI (explore/transport.h): MPI_COMM_WORLD's ranks, collectives only.
// `qpcheck verify --distributed` under `mpirun -np N` (docs/distributed.md). Errors return (MPI_ERRORS_RETURN) and
// become explore::TransportError naming the call; a rank that dies makes mpirun end the others (SIGTERM).
#pragma once

#include <cstdint>
#include <vector>

#include "checker/explore/transport.h"

namespace qpcheck::cli {

class MpiTransport : public explore::Transport {
 public:
  // MPI_Init on first use (a process started without mpirun is a singleton: one rank); MPI_Finalize at exit.
  static MpiTransport& get();
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(const std::vector<std::vector<uint64_t>>& out, std::vector<uint64_t>& in,
                std::vector<uint64_t>& in_words) override;
  void sum(std::vector<uint64_t>& v) override;
  void min(std::vector<uint64_t>& v) override;
  void max(std::vector<uint64_t>& v) override;
  void broadcast(std::vector<uint64_t>& v, int root) override;
  // Ends every rank of the job with `code` (an error only some ranks met: they cannot all return).
  [[noreturn]] void abort(int code);

 private:
  MpiTransport();
  int rank_ = 0, size_ = 1;
};

}  // namespace qpcheck::cli
