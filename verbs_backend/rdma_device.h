// The Device over rdma-core: librdmacm for the connection (two event channels: the active cm_id's and the
// listener's, which also carries the passive cm_id's events), libibverbs for PD, MR, CQs, posts and polling.
// Errors are normalised into Status at the boundary: ibv_* calls return an errno value, rdma_* calls return -1 and
// set errno, constructors return NULL and set errno. Resources are RAII handles released in reverse order of
// creation; nothing is file-scope static.
#pragma once

#include <memory>
#include <string>

#include "verbs_backend/device.h"

namespace qpcheck::verbs {

// `device` is an ibv device name ("rxe0", "siw0"). `address`: the IPv4 address to listen on and connect to; empty:
// the first local IPv4 address that librdmacm binds to `device`. open() fails (an environment error) when the
// device does not exist, cannot be opened (permission), or has no address.
std::unique_ptr<Device> make_rdma_device(const std::string& device, const std::string& address);

}  // namespace qpcheck::verbs
