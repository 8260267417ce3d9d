#include "checker/cli/mpi_transport.h"

#define OMPI_SKIP_MPICXX 1  // the C API only (the C++ bindings include "mpi.h" by a path Bazel does not see)
#include <mpi/mpi.h>  // Debian: /usr/include/x86_64-linux-gnu/mpi -> Open MPI's (libopenmpi-dev)

#include <climits>
#include <cstdlib>
#include <string>

namespace qpcheck::cli {

namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw explore::TransportError(std::string(call) + " failed: " + std::string(text, static_cast<size_t>(len)));
}

void reduce(std::vector<uint64_t>& v, MPI_Op op, const char* call) {
  if (v.size() > static_cast<size_t>(INT_MAX)) throw explore::TransportError(std::string(call) + ": too many values");
  check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, op, MPI_COMM_WORLD), call);
}

}  // namespace

MpiTransport& MpiTransport::get() {
  static MpiTransport t;
  return t;
}

MpiTransport::MpiTransport() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    check(MPI_Init(nullptr, nullptr), "MPI_Init");
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

void MpiTransport::exchange(const std::vector<std::vector<uint64_t>>& out, std::vector<uint64_t>& in,
                            std::vector<uint64_t>& in_words) {
  const size_t p = static_cast<size_t>(size_);
  std::vector<uint64_t> send_counts(p), recv_counts(p);
  for (size_t r = 0; r < p; ++r) send_counts[r] = out[r].size();
  check(MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Alltoall");
  std::vector<int> sc(p), sd(p), rc(p), rd(p);
  std::vector<uint64_t> send;
  uint64_t total_in = 0, total_out = 0;
  for (size_t r = 0; r < p; ++r) {
    if (total_out + send_counts[r] > INT_MAX || total_in + recv_counts[r] > INT_MAX) {
      throw explore::TransportError("a round's messages exceed 2^31 words per rank; lower --round-states");
    }
    sd[r] = static_cast<int>(total_out);
    sc[r] = static_cast<int>(send_counts[r]);
    rd[r] = static_cast<int>(total_in);
    rc[r] = static_cast<int>(recv_counts[r]);
    total_out += send_counts[r];
    total_in += recv_counts[r];
  }
  send.reserve(total_out);
  for (size_t r = 0; r < p; ++r) send.insert(send.end(), out[r].begin(), out[r].end());
  in.resize(total_in);
  check(MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_UINT64_T, in.data(), rc.data(), rd.data(),
                      MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Alltoallv");
  in_words = recv_counts;
}

void MpiTransport::sum(std::vector<uint64_t>& v) { reduce(v, MPI_SUM, "MPI_Allreduce(sum)"); }
void MpiTransport::min(std::vector<uint64_t>& v) { reduce(v, MPI_MIN, "MPI_Allreduce(min)"); }
void MpiTransport::max(std::vector<uint64_t>& v) { reduce(v, MPI_MAX, "MPI_Allreduce(max)"); }

void MpiTransport::broadcast(std::vector<uint64_t>& v, int root) {
  uint64_t n = v.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  if (n > static_cast<uint64_t>(INT_MAX)) throw explore::TransportError("MPI_Bcast: too many values");
  v.resize(static_cast<size_t>(n));
  check(MPI_Bcast(v.data(), static_cast<int>(n), MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void MpiTransport::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace qpcheck::cli
